// Runs first in `npm start`: a clear message instead of a syntax error on an old Node.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(`Node ${process.versions.node} is too old; this project runs on Node 24 (npm installs it: run \`npm ci\`).`);
  process.exit(1);
}
