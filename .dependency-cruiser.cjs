/**
 * The import rules between processes (docs/architecture.md, "Import rules"), checked by
 * `npm run lint`. Type-only imports count like any other: a type import of a workflow module
 * ties its types to the importer all the same.
 */
const hostCode = '^(server/browsers/host/|activities/browserHost[.]ts$)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-workflow-modules-outside-workflows',
      comment:
        'Activities, domain and host code import workflow contracts (workflows/contracts/), never workflow modules: ' +
        'a workflow is started by its type name and typed by the function type its contract declares. A contract ' +
        'imports other contracts, never a workflow module.',
      severity: 'error',
      from: { path: '^(activities/|server/|workflows/contracts/)' },
      to: { path: '^workflows/', pathNot: '^workflows/contracts/' },
    },
    {
      name: 'workflows-import-workflows-and-the-engine',
      comment:
        'Workflow code is deterministic and bundled apart: it imports other workflow modules, its contracts, the ' +
        'workflow-safe engine (server/pipelines/engine/) and the Temporal workflow SDK; activities only by the ' +
        'interface its contract declares.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { pathNot: ['^workflows/', '^server/pipelines/engine/', '(^|/)node_modules/@temporalio/(workflow|common)/'] },
    },
    {
      name: 'host-loads-no-model-code-or-billing',
      comment:
        'A browser host runs browsers and pipeline nodes: it never loads the model side of agent jobs ' +
        '(server/agents/model/: the conversation, the models), the AI SDK, node-llama-cpp or billing (its money arithmetic aside), not ' +
        'even through another module. It reads pages with server/agents/page/ and records its tool calls with server/agents/messages.ts.',
      severity: 'error',
      from: { path: hostCode },
      to: {
        path: [
          '^server/agents/model/',
          // money.ts is decimal and currency arithmetic, which the config parses prices with.
          '^server/billing/(?!money[.]ts$)',
          '(^|/)node_modules/(ai|@ai-sdk/[^/]+|node-llama-cpp)/',
        ],
        reachable: true,
      },
    },
    {
      name: 'agents-page-side-reaches-no-model-side',
      comment:
        'What reads pages (server/agents/page/) and what both sides of agent jobs share (the files at server/agents/ top level: ' +
        'messages, tool specs, the proposal schema, prompt values) never reach the model side (server/agents/model/), not even ' +
        'through another module: the browser host loads them.',
      severity: 'error',
      from: { path: '^server/agents/(page/|[^/]+[.]ts$)' },
      to: { path: '^server/agents/model/', reachable: true },
    },
    {
      name: 'in-page-code-imports-only-in-page-code',
      comment:
        "The page model's in-page code (server/agents/page/collect/) is sent to pages as its functions' text, put together by " +
        'collect/inPage.ts: a value imported from outside the folder is not there when it runs. Types may come from anywhere.',
      severity: 'error',
      from: { path: '^server/agents/page/collect/' },
      to: { pathNot: '^server/agents/page/collect/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
