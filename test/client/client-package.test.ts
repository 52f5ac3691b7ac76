import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, registerUser } from '../support/accounts.ts';
import { projectRoot } from '../support/processes.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The SDK as a user gets it: `npm pack` in client/ (which builds it), the tarball installed into a
 * new project elsewhere, a file there type-checked with strict TypeScript and run with Node against
 * a real service. Nothing comes from the registry: @trpc/client and @trpc/server, the package's
 * dependencies, are packed from the project's own node_modules, and the scratch project's
 * TypeScript is a link to the project's.
 */

const clientDir = path.join(projectRoot, 'client');
const rootNodeModules = path.join(projectRoot, 'node_modules');
const SERVER_PACKAGES = ['fastify', '@mikro-orm', 'playwright-core', '@temporalio', 'pg', 'zod', 'trpc-to-openapi', 'pino'];

const execFileAsync = promisify(execFile);

/** The project's Node and npm, with nothing of an npm run that started the tests (its npm_* settings). */
function commandEnv(cache: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.toLowerCase().startsWith('npm_')) env[name] = value;
  return {
    ...env,
    PATH: `${path.join(rootNodeModules, '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_cache: cache,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  try {
    // Generous: the build type-checks the server, which takes minutes when the suite loads both cores.
    return await execFileAsync(command, args, { cwd, env, timeout: 300_000, maxBuffer: 20 * 1024 * 1024 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: error });
  }
}

/** The scratch project's one source file: a typed call that runs, and typed mistakes that must not compile. */
const CALL_TS = `import { type BrowserflowClient, createBrowserflowClient, isBrowserflowError, type RouterOutputs } from '@browserflow/client';
import settings from './settings.json' with { type: 'json' };

const bf = createBrowserflowClient({ url: settings.url, apiKey: settings.apiKey });
const info: RouterOutputs['root']['info'] = await bf.root.info.query();
const subject: 'user' | 'apiKey' | undefined = info.subject?.type;

const missing = await bf.projects.get.query({ project: 'no-such-project' }).catch((error: unknown) => error);
if (!isBrowserflowError(missing)) throw new Error('expected the call to fail');
const httpStatus: number | undefined = missing.data?.httpStatus;
const domainCode: string | undefined = missing.data?.domainCode;

console.log(JSON.stringify({ name: info.name, subject, userId: info.subject?.userId, httpStatus, domainCode }));

/** Never called: each line is a mistake the SDK's types must refuse. */
export async function mistakes(client: BrowserflowClient) {
  // @ts-expect-error: a project is named by its slug or id, a string
  await client.projects.get.query({ project: 42 });
  // @ts-expect-error: projects.create needs a name
  await client.projects.create.mutate({ slug: 'x', public: false });
  // @ts-expect-error: root.info answers no field nope
  (await client.root.info.query()).nope;
  // @ts-expect-error: there is no procedure projects.nope
  await client.projects.nope.query();
  // @ts-expect-error: projects.create is a mutation, not a query
  await client.projects.create.query({ name: 'x', slug: 'x', public: false });
}
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: 'es2024',
    module: 'nodenext',
    // tRPC's declarations name Disposable (esnext.disposable); fetch and console come from dom.
    lib: ['es2024', 'esnext.disposable', 'dom'],
    types: [],
    resolveJsonModule: true,
    verbatimModuleSyntax: true,
    erasableSyntaxOnly: true,
    // The installed declarations are checked too, ours and tRPC's.
    skipLibCheck: false,
    noEmit: true,
  },
  files: ['call.ts'],
};

let stack: TestStack;
let work: string;
let app: string;
let env: NodeJS.ProcessEnv;

/** Packs the SDK (its prepack builds it) and its dependencies, and installs them into a new project. */
async function installPackedSdk() {
  const packs = path.join(work, 'packs');
  mkdirSync(packs);
  mkdirSync(app);
  await Promise.all([
    run('npm', ['pack', '--pack-destination', packs], clientDir, env),
    run(
      'npm',
      [
        'pack',
        '--ignore-scripts',
        '--pack-destination',
        packs,
        ...['@trpc/client', '@trpc/server'].map((p) => path.join(rootNodeModules, p)),
      ],
      work,
      env,
    ),
  ]);
  const tarball = (prefix: string) => {
    const name = readdirSync(packs).find((f) => f.startsWith(prefix) && f.endsWith('.tgz'));
    if (!name) throw new Error(`no ${prefix}*.tgz in ${readdirSync(packs).join(', ')}`);
    return path.join(packs, name);
  };
  writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({
      name: 'sdk-user',
      private: true,
      type: 'module',
      // The SDK's dependencies come from the packed tarballs instead of the registry.
      overrides: { '@trpc/client': `file:${tarball('trpc-client-')}`, '@trpc/server': `file:${tarball('trpc-server-')}` },
      devDependencies: { typescript: `file:${realpathSync(path.join(rootNodeModules, 'typescript'))}` },
    }),
  );
  await run('npm', ['install', '--offline', '--ignore-scripts', '--save-exact', tarball('browserflow-client-')], app, env);
}

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'bf-sdk-'));
  app = path.join(work, 'app');
  env = commandEnv(path.join(work, 'npm-cache'));
  // The stack starts while npm packs and installs.
  const [started] = await Promise.all([startTestStack(), installPackedSdk()]);
  stack = started;
}, 600_000);

afterAll(async () => {
  await stack?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the SDK package', () => {
  it('keeps its version and dependency pins with the service', () => {
    const root = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));
    const client = JSON.parse(readFileSync(path.join(clientDir, 'package.json'), 'utf8'));
    expect(client.version).toBe(root.version);
    for (const [name, version] of Object.entries(client.dependencies)) expect(version, name).toBe(root.dependencies[name]);
  });

  it('a user installs the packed SDK into a new project and gets only it and tRPC, nothing of the server', () => {
    const installed = readdirSync(path.join(app, 'node_modules'))
      .filter((entry) => !entry.startsWith('.'))
      .flatMap((entry) =>
        entry.startsWith('@') ? readdirSync(path.join(app, 'node_modules', entry)).map((name) => `${entry}/${name}`) : [entry],
      );
    expect(installed.sort()).toEqual(['@browserflow/client', '@trpc/client', '@trpc/server', 'typescript']);
    for (const name of SERVER_PACKAGES)
      expect(
        installed.some((p) => p === name || p.startsWith(`${name}/`)),
        name,
      ).toBe(false);

    const dist = path.join(app, 'node_modules/@browserflow/client/dist');
    expect(readdirSync(dist).sort()).toEqual(['appRouter.d.ts', 'index.d.ts', 'index.js']);
    for (const file of ['appRouter.d.ts', 'index.d.ts']) {
      const text = readFileSync(path.join(dist, file), 'utf8');
      const modules = [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
      expect(modules.length, file).toBeGreaterThan(0);
      for (const name of modules) expect(name, `${file} imports ${name}`).toMatch(/^(@trpc\/(client|server)|\.\/[\w-]+\.js)$/);
    }
  });

  it('type-checks a typed call strictly, and refuses typed mistakes', async () => {
    writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    writeFileSync(path.join(app, 'call.ts'), CALL_TS);
    writeFileSync(path.join(app, 'settings.json'), JSON.stringify({ url: 'http://127.0.0.1:1', apiKey: 'bfk_placeholder' }));
    // Each @ts-expect-error must meet an error, or tsc fails with "Unused '@ts-expect-error' directive":
    // types that had collapsed to `any` would fail here.
    await run('node', [path.join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app, env);
  });

  it('makes a typed call against the running service with Node', async () => {
    const user = await registerUser(stack);
    const key = await createApiKey(stack, user.token, { accessType: 'full' });
    writeFileSync(path.join(app, 'call.ts'), CALL_TS);
    writeFileSync(path.join(app, 'settings.json'), JSON.stringify({ url: stack.url, apiKey: key.secret }));

    const { stdout } = await run('node', ['call.ts'], app, env);
    expect(JSON.parse(stdout.trim())).toEqual({
      name: 'browserflow',
      subject: 'apiKey',
      userId: user.id,
      httpStatus: 404,
      domainCode: 'not_found',
    });
  });
});
