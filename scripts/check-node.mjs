// Runs first in `npm start`: a clear message instead of a syntax error on an old Node.
// Plain JavaScript (.mjs), so that any Node can run it: a .ts file fails on Node < 22.18
// (ERR_UNKNOWN_FILE_EXTENSION) before it could say anything.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(`Node ${process.versions.node} is too old; this project runs on Node 24 (npm installs it: run \`npm ci\`).`);
  process.exit(1);
}
