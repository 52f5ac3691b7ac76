import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Writes a benchmark's figures into its page under docs/benchmarks/, between the markers
 * `<!-- figures: written by bench/<bench> -->` and `<!-- /figures -->`. What the page says around
 * them (the analysis, dated findings) is written by people and kept as it is. A page without the
 * markers gets them at its end; a missing page is made with `title`.
 */
export function writeFiguresBlock(docsFile: string, bench: string, title: string, figures: string) {
  const start = `<!-- figures: written by bench/${bench} -->`;
  const end = '<!-- /figures -->';
  const block = `${start}\n${figures.trim()}\n${end}`;
  mkdirSync(path.dirname(docsFile), { recursive: true });
  const page = existsSync(docsFile) ? readFileSync(docsFile, 'utf8') : `# ${title}\n\n${start}\n${end}\n`;
  const from = page.indexOf(start);
  const to = page.indexOf(end, from);
  writeFileSync(docsFile, from >= 0 && to > from ? page.slice(0, from) + block + page.slice(to + end.length) : `${page}\n${block}\n`);
  // The linter formats Markdown too (aligned table columns); leave the file as it wants it.
  spawnSync(process.execPath, [require.resolve('@biomejs/biome/bin/biome'), 'format', '--write', docsFile], { stdio: 'ignore' });
}
