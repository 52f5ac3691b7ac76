/**
 * `node scripts/render-allow-lists.ts`: writes the allow-lists of docs/browsers.md (the part
 * between its `allow-lists` markers) from the tables the service enforces: the launch flags of
 * server/browsers/launch/launchSettings.ts and the CDP methods and parameter rules of
 * server/http/browsers/cdpAllowList.ts and cdpGuard.ts; then format the file with
 * `npx biome format --write docs/browsers.md`. test/net/allow-lists.unit.test.ts renders the same text
 * and fails when the file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { allowedLaunchFlags } from '../server/browsers/launch/launchSettings.ts';
import { allowedCdpMethods, refusedCdpDomains, refusedCdpMethods } from '../server/http/browsers/cdpAllowList.ts';
import { parameterRules } from '../server/http/browsers/cdpGuard.ts';

const code = (text: string) => `\`${text}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The allow-lists in Markdown, as docs/browsers.md embeds them between its markers. */
export function renderAllowLists() {
  const lines: string[] = [];
  lines.push('### Launch flags a session may pass (`args`)', '');
  lines.push('| flag | value | what it does |', '|---|---|---|');
  for (const [name, flag] of allowedLaunchFlags) {
    lines.push(`| ${code(`--${name}`)} | ${flag.value ? cell(flag.value.shape) : 'none'} | ${cell(flag.does)} |`);
  }
  lines.push('', '### CDP methods a remoteUrl holder may call', '');
  lines.push('| domain | methods |', '|---|---|');
  for (const [domain, methods] of Object.entries(allowedCdpMethods)) {
    lines.push(`| ${code(domain)} | ${methods.map(code).join(', ')} |`);
  }
  lines.push('', 'Refused with their reason (`-32000`), whatever their parameters:', '');
  lines.push('| domain or method | why |', '|---|---|');
  for (const [name, why] of [...refusedCdpDomains, ...refusedCdpMethods]) {
    lines.push(`| ${code(refusedCdpDomains.has(name) ? `${name}.*` : name)} | ${cell(why)} |`);
  }
  lines.push('', 'Allowed, with their parameters checked:', '');
  lines.push('| method | rule |', '|---|---|');
  for (const [method, { rule }] of parameterRules) lines.push(`| ${code(method)} | ${cell(rule)} |`);
  return lines.join('\n');
}

const START = '<!-- allow-lists: start -->\n';
const END = '\n<!-- allow-lists: end -->';

if (import.meta.main) {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '../docs/browsers.md');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.slice(0, text.indexOf(START) + START.length) + renderAllowLists() + text.slice(text.indexOf(END)));
  console.log(`wrote the allow-lists of ${path.relative(process.cwd(), file)}; now run npx biome format --write on it`);
}
