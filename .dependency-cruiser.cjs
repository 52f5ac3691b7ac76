/**
 * The import rules between processes (docs/architecture.md, "Import rules"), checked by
 * `npm run lint`. Type-only imports count like any other: a type import of a workflow module
 * ties its types to the importer all the same.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'No import circle: a circle ties its modules into one unit that loads, tests and changes together. The ' +
        "ORM's entity pairs (a Pipeline and its versions, a function and its versions) are the exception: MikroORM " +
        'relations name each other by class.',
      severity: 'error',
      from: { pathNot: '^db/entities/' },
      to: { circular: true },
    },
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
      name: 'only-the-api-layer-imports-trpc',
      comment:
        'server/trpc/ is the API layer: procedures call domain code, never the other way round. Only the api ' +
        'layer (server/trpc/, server/http/), the app factory (server/app.ts) and the process entries (server/main/) ' +
        "import it; what domain code shares with routers (loading a project's rows) lives in the domain " +
        '(server/projects/projectRows.ts).',
      severity: 'error',
      from: {
        path: '^(server/|activities/|workflows/)',
        pathNot: '^server/(trpc/|http/|main/|app[.]ts$)',
      },
      to: { path: '^server/trpc/' },
    },
    {
      name: 'host-process-loads-no-model-code-or-billing',
      comment:
        'A browser host process (server/main/browserHost.ts) runs browsers and pipeline nodes: nothing it loads, ' +
        'however indirectly, is the model side of agent jobs (server/agents/model/conversation.ts and the models), the AI ' +
        'SDK, node-llama-cpp, billing or the control worker with its activity registry. ' +
        'Checked from the entry file, so a path through shared code (the runtime, the Temporal client) fails too. ' +
        'Message recording for its tool calls is server/agents/messages.ts.',
      severity: 'error',
      from: { path: '^server/main/browserHost[.]ts$' },
      to: {
        path: [
          '^server/agents/model/',
          // The config parses prices and currencies with server/decimals.ts, not billing's money.ts.
          '^server/billing/',
          '^server/main/controlWorker[.]ts$',
          '(^|/)node_modules/(ai|@ai-sdk/[^/]+|node-llama-cpp)/',
        ],
        reachable: true,
      },
    },
    {
      name: 'api-process-loads-no-host-code-or-activities',
      comment:
        'An api process (server/main/api.ts) starts and signals workflows through the Temporal client ' +
        '(server/infra/temporalClient.ts): nothing it loads, however indirectly, is browser host code, an activity or ' +
        'the control worker. Code both sides read lives outside server/browsers/host/ (server/browsers/launch/chromiumFlags.ts).',
      severity: 'error',
      from: { path: '^server/main/api[.]ts$' },
      to: { path: ['^server/browsers/host/', '^activities/', '^server/main/controlWorker[.]ts$'], reachable: true },
    },
    {
      name: 'only-the-edge-imports-http',
      comment:
        'server/http/ is the HTTP edge (raw routes, the OpenAPI document, the REST adapter): only the app ' +
        '(server/app.ts), the process mains (server/main/), the tRPC routers (which answer waiting calls with ' +
        'server/http/waitingAnswers.ts) and http itself import it. Domain code takes what it shares with the edge ' +
        'from neutral modules (server/wireShapes.ts, server/eventStream.ts).',
      severity: 'error',
      from: { pathNot: '^(server/http/|server/main/|server/trpc/|server/app[.]ts$)' },
      to: { path: '^server/http/' },
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
