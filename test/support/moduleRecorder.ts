/**
 * Preloaded into a process under test (`node --import ./test/support/moduleRecorder.ts`, or
 * NODE_OPTIONS): records the URL of every module the process resolves, by `import` or `require`,
 * and writes them as JSON to `$LOADED_MODULES_DIR/<pid>.json` as the process exits.
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import path from 'node:path';

const dir = process.env.LOADED_MODULES_DIR;
if (dir) {
  const urls = new Set<string>();
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      urls.add(resolved.url);
      return resolved;
    },
  });
  process.on('exit', () => writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify([...urls])));
}
