import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as workflows from '../../workflows/index.ts';

/**
 * The api, activities and hosts start workflows by the type names their contracts declare
 * (`<name>WorkflowType`), never by importing the workflow: a renamed or unexported workflow would
 * otherwise only show when a start fails at run time.
 */
const contractsDir = path.join(import.meta.dirname, '..', '..', 'workflows', 'contracts');

async function declaredTypeNames() {
  const names: { contract: string; constant: string; typeName: unknown }[] = [];
  for (const file of readdirSync(contractsDir).filter((name) => name.endsWith('.ts'))) {
    const contract = await import(path.join(contractsDir, file));
    for (const [constant, typeName] of Object.entries(contract)) {
      if (constant.endsWith('WorkflowType')) names.push({ contract: file, constant, typeName });
    }
  }
  return names;
}

describe('workflow contracts', () => {
  it('every type name a contract declares is a workflow the control worker exports under that name', async () => {
    const declared = await declaredTypeNames();
    expect(declared.length).toBeGreaterThan(0);
    for (const { contract, constant, typeName } of declared) {
      expect(typeof typeName, `${contract} ${constant}`).toBe('string');
      expect(typeof (workflows as Record<string, unknown>)[typeName as string], `${contract} ${constant} = ${String(typeName)}`).toBe(
        'function',
      );
    }
  });

  it('every exported workflow has its type name in a contract', async () => {
    const declared = new Set((await declaredTypeNames()).map(({ typeName }) => typeName));
    for (const name of Object.keys(workflows)) expect(declared.has(name), name).toBe(true);
  });
});
