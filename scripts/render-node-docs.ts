/**
 * `node scripts/render-node-docs.ts`: writes the node reference of docs/pipeline-language.md (the
 * part between its `node reference` markers) from the node registry; then format the file with
 * `npx biome format --write docs/pipeline-language.md`. test/pipelines/pipeline-compiler.unit.test.ts renders
 * the same text and fails when the file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeRegistry } from '../server/pipelines/engine/registry.ts';

/** JSON on one line, with spaces: `{ "a": [1, 2] }`. */
function inlineJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inlineJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${inlineJson(item)}`);
    return entries.length ? `{ ${entries.join(', ')} }` : '{}';
  }
  return JSON.stringify(value);
}

/** A source as people write it: one line per node, parameter and output. */
function formatSource(source: Record<string, unknown>): string {
  const sections = Object.entries(source).map(([key, value]) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return `  ${JSON.stringify(key)}: ${inlineJson(value)}`;
    const lines = Object.entries(value).map(([name, item]) => `    ${JSON.stringify(name)}: ${inlineJson(item)}`);
    return `  ${JSON.stringify(key)}: {\n${lines.join(',\n')}\n  }`;
  });
  return `{\n${sections.join(',\n')}\n}`;
}

const code = (text: string) => `\`${text.replace(/\|/g, '\\|')}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The node reference in Markdown, as docs/pipeline-language.md embeds it between its markers.
 */
export function renderNodeReference() {
  const lines: string[] = [];
  for (const spec of nodeRegistry.values()) {
    lines.push(`### ${code(spec.type)} — ${spec.title}`, '', spec.description, '');
    const runs = spec.browser
      ? 'Browser node (runs on the browser’s host).'
      : spec.category === 'flow'
        ? 'Flow node (the interpreter runs it; no browser).'
        : 'Data node (no browser).';
    lines.push(runs, '');
    if (Object.keys(spec.inputs).length || spec.extraInputs) {
      lines.push('| input | refType | required | default | description |', '|---|---|---|---|---|');
      for (const [name, input] of Object.entries(spec.inputs)) {
        const range = input.min !== undefined || input.max !== undefined ? ` (${input.min ?? ''}–${input.max ?? ''})` : '';
        const type = input.enum ? `${input.refType}: ${input.enum.map((v) => code(v)).join(', ')}` : `${input.refType}${range}`;
        const fallback = input.default === undefined ? '' : code(JSON.stringify(input.default));
        lines.push(`| ${code(name)} | ${type} | ${input.required ? 'yes' : 'no'} | ${fallback} | ${cell(input.description)} |`);
      }
      if (spec.extraInputs)
        lines.push(`| _any other name_ | ${spec.extraInputs.refType} | no |  | ${cell(spec.extraInputs.description)} |`);
      lines.push('');
    }
    if (spec.oneOf) lines.push(`Give at least one of ${spec.oneOf.map((name) => code(name)).join(', ')}.`, '');
    for (const [key, block] of Object.entries(spec.blocks ?? {})) {
      const inner = Object.entries(block.inner)
        .map(([name, output]) => `${code(`<node>.${name}`)} (${output.refType})`)
        .join(', ');
      lines.push(`Sub-graph ${code(key)}${block.required ? ' (required)' : ''}: ${block.description} Inside it: ${inner}.`, '');
    }
    lines.push('| output | refType | description |', '|---|---|---|');
    for (const [name, output] of Object.entries(spec.outputs))
      lines.push(`| ${code(name)} | ${output.refType} | ${cell(output.description)} |`);
    if (spec.blockOutputs === 'list') lines.push('| _each body output_ | list | One value per element. |');
    if (spec.blockOutputs === 'value') lines.push('| _each branch output_ | its type | The taken branch’s value, or null. |');
    lines.push('', 'Example:', '', '```json', formatSource(spec.example), '```', '');
  }
  return lines.join('\n');
}

const START = '<!-- node reference: start -->\n';
const END = '\n<!-- node reference: end -->';

if (import.meta.main) {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '../docs/pipeline-language.md');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.slice(0, text.indexOf(START) + START.length) + renderNodeReference() + text.slice(text.indexOf(END)));
  console.log(`wrote the node reference of ${path.relative(process.cwd(), file)}; now run npx biome format --write on it`);
}
