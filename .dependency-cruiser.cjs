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
      name: 'console-pages-are-imported-by-the-router-only',
      comment:
        'A console page (a file directly in console/src/pages/) is imported by App.tsx, which routes to it, and by ' +
        'nothing else: what pages share lives in console/src/components/, and the parts of one page in a folder of its ' +
        "own (pages/project/ holds the project page's tabs).",
      severity: 'error',
      from: { path: '^console/src/', pathNot: '^console/src/App[.]tsx$' },
      to: { path: '^console/src/pages/[^/]+[.]tsx$' },
    },
    {
      name: 'console-components-import-no-page-code',
      comment: 'The shared parts in console/src/components/ serve every page, so none of them imports from console/src/pages/.',
      severity: 'error',
      from: { path: '^console/src/components/' },
      to: { path: '^console/src/pages/' },
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
