/**
 * The import rules between processes (docs/architecture.md, "Import rules"), checked by
 * `npm run lint`. Type-only imports count like any other: a type import of a workflow module
 * ties its types to the importer all the same.
 */
const hostCode = '^(server/browsers/host/|activities/browserHost/)';

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
        '(server/agents/conversation.ts and the models), the AI SDK, node-llama-cpp or billing (its money arithmetic aside), not even through ' +
        'another module. Message recording for its tool calls is server/agents/messages.ts.',
      severity: 'error',
      from: { path: hostCode },
      to: {
        path: [
          '^server/agents/(conversation|models|localModel|builtin)[.]ts$',
          // money.ts is decimal and currency arithmetic, which the config parses prices with.
          '^server/billing/(?!money[.]ts$)',
          '(^|/)node_modules/(ai|@ai-sdk/[^/]+|node-llama-cpp)/',
        ],
        reachable: true,
      },
    },
    {
      name: 'only-main-and-host-activities-import-the-host',
      comment:
        'The browser host (server/browsers/host/) is started by server/main/ and reached by its own activities ' +
        '(activities/browserHost/), nothing else: what the host and other code both read lives outside host/ ' +
        '(server/browsers/launch/chromiumFlags.ts, server/browsers/page/isolatedWorld.ts, server/pipelines/cellValues.ts, ' +
        'server/net/egressPolicy.ts), so the api and the control worker never load host code through it.',
      severity: 'error',
      from: { pathNot: '^(server/main/|activities/browserHost/|server/browsers/host/)' },
      to: { path: '^server/browsers/host/' },
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
