import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../../access.tsx';
import { bf, type RouterOutputs } from '../../api.ts';
import { ArgumentInput, argsOf } from '../../components/ArgumentInput.tsx';
import { Block, Copyable, ErrorLine, Loaded, usePagedList } from '../../components/parts.tsx';
import { trpc } from '../../trpc.ts';
import { CreateFunction } from './CreateFunction.tsx';

type PipelineFunction = RouterOutputs['functions']['list'][number];
type McpServer = RouterOutputs['mcpServers']['list'][number];

/** The project's functions with a "try it" form each, and its MCP servers with their client set-up. */
export function FunctionsTab({ slug }: { slug: string }) {
  const functions = useQuery(trpc.functions.list.queryOptions({ project: slug, limit: 100 }));
  return (
    <>
      <section>
        <h2>Functions</h2>
        <p className="muted">A function is a pipeline version published with typed parameters and outputs, executed by its slug.</p>
        <Loaded query={functions}>
          {(rows) =>
            rows.length === 0 ? (
              <CreateFunction slug={slug} empty />
            ) : (
              <>
                <CreateFunction slug={slug} />
                {rows.map((fn) => (
                  <FunctionCard key={fn.id} slug={slug} fn={fn} />
                ))}
              </>
            )
          }
        </Loaded>
      </section>
      <McpServers slug={slug} functions={functions.data ?? []} />
    </>
  );
}

function FunctionCard({ slug, fn }: { slug: string; fn: PipelineFunction }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const parameters = Object.fromEntries(fn.parameters.map((parameter) => [parameter.name, parameter]));
  const execute = useMutation({
    mutationFn: () => bf.functions.executeBySlug.mutate({ project: slug, slug: fn.slug, args: argsOf(parameters, values), wait: 60 }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    execute.mutate();
  };
  return (
    <article className="card" aria-label={`function ${fn.slug}`}>
      <header className="row">
        <strong>{fn.name}</strong>
        <code>{fn.slug}</code>
        <span className="muted">→ {fn.outputs.map((output) => `${output.name}: ${output.refType}`).join(', ') || 'no outputs'}</span>
      </header>
      {fn.description && <p className="muted">{fn.description}</p>}
      <form onSubmit={submit} className="row">
        {fn.parameters.map((parameter) => (
          <label key={parameter.name}>
            {parameter.name} <span className="muted">({parameter.refType})</span>
            <ArgumentInput
              parameter={parameter}
              value={values[parameter.name] ?? ''}
              onChange={(value) => setValues({ ...values, [parameter.name]: value })}
            />
          </label>
        ))}
        <WriteButton type="submit" disabled={execute.isPending}>
          {execute.isPending ? 'Running…' : 'Try it'}
        </WriteButton>
      </form>
      <ErrorLine error={execute.error} />
      {execute.data && (
        <div className="stack">
          <span>
            Run <code>{execute.data.identifier.slice(0, 8)}</code>:{' '}
            <span className={`status ${execute.data.result.status.pipeline}`}>{execute.data.result.status.pipeline}</span>
          </span>
          {execute.data.result.error && (
            <p className="error">
              {execute.data.result.error.message} ({execute.data.result.error.code})
            </p>
          )}
          <Block label={`outputs of ${fn.slug}`}>{JSON.stringify(execute.data.outputs, null, 2)}</Block>
        </div>
      )}
    </article>
  );
}

/** MCP servers: create one from functions, then link an API key to it and copy a client's config. */
function McpServers({ slug, functions }: { slug: string; functions: PipelineFunction[] }) {
  const queries = useQueryClient();
  const servers = usePagedList((page) => trpc.mcpServers.list.queryOptions({ project: slug, ...page }), 'MCP servers');
  const [name, setName] = useState('');
  const [serverSlug, setServerSlug] = useState('');
  const [functionIds, setFunctionIds] = useState<string[]>([]);
  const create = useMutation({
    mutationFn: () => bf.mcpServers.create.mutate({ project: slug, name, slug: serverSlug, description: '', functionIds }),
    onSuccess: () => {
      setName('');
      setServerSlug('');
      setFunctionIds([]);
      return queries.invalidateQueries({ queryKey: trpc.mcpServers.list.queryKey({ project: slug }) });
    },
  });
  return (
    <section>
      <h2>MCP servers</h2>
      <p className="muted">An MCP server offers functions to AI agents as tools, to clients whose API key is linked to it.</p>
      <Loaded query={servers}>{(rows) => rows.map((server) => <McpServerCard key={server.id} slug={slug} server={server} />)}</Loaded>
      {servers.pager}
      <form
        className="stack"
        aria-label="new MCP server"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <strong>New MCP server</strong>
        <div className="row">
          <label>
            Name
            <input required value={name} onChange={(event) => setName(event.target.value)} />
          </label>
          <label>
            Server slug
            <input required value={serverSlug} onChange={(event) => setServerSlug(event.target.value)} />
          </label>
        </div>
        <fieldset>
          <legend>Its tools</legend>
          {functions.length === 0 && <span className="muted">No functions to offer yet.</span>}
          {functions.map((fn) => (
            <label key={fn.id} className="inline">
              <input
                type="checkbox"
                checked={functionIds.includes(fn.id)}
                onChange={(event) =>
                  setFunctionIds(event.target.checked ? [...functionIds, fn.id] : functionIds.filter((id) => id !== fn.id))
                }
              />{' '}
              {fn.slug}
            </label>
          ))}
        </fieldset>
        <WriteButton type="submit" disabled={create.isPending}>
          Create MCP server
        </WriteButton>
        <ErrorLine error={create.error} />
      </form>
    </section>
  );
}

/**
 * One server: its endpoint, and the link that `api_key_not_linked` asks for, in one step: a new
 * key (its secret shown once, inside the configs) or one of yours, linked by a client config.
 */
function McpServerCard({ slug, server }: { slug: string; server: McpServer }) {
  const queries = useQueryClient();
  const configs = useQuery(trpc.mcpClientConfigs.list.queryOptions({ project: slug, limit: 100 }));
  const keys = useQuery(trpc.apiKeys.list.queryOptions({ limit: 100 }));
  const [keyChoice, setKeyChoice] = useState(server.functions.length ? 'new' : '');
  const [secret, setSecret] = useState<string | null>(null);
  const endpoint = `${window.location.origin}/${slug}/api/mcp-servers/${server.id}/mcp`;
  const link = useMutation({
    mutationFn: async () => {
      let apiKeyId = keyChoice;
      if (keyChoice === 'new') {
        const permissions = await toolPermissions(slug, server.functions);
        const key = await bf.apiKeys.create.mutate({ name: `MCP ${server.slug}`, accessType: 'custom', permissions });
        apiKeyId = key.id;
        setSecret(key.secret);
      } else {
        setSecret(null);
      }
      return bf.mcpClientConfigs.create.mutate({
        project: slug,
        name: `${server.slug} ${Date.now().toString(36)}`,
        description: '',
        mcpServerId: server.id,
        apiKeyId,
      });
    },
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: trpc.mcpClientConfigs.list.queryKey({ project: slug }) }),
        queries.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() }),
      ]),
  });
  const linked = configs.data?.filter((config) => config.mcpServerId === server.id) ?? [];
  const key = secret ?? '<your API key>';
  return (
    <article className="card" aria-label={`MCP server ${server.slug}`}>
      <header className="row">
        <strong>{server.name}</strong>
        <code>{server.slug}</code>
        <span className="muted">tools: {server.functions.map((fn) => fn.slug).join(', ') || 'none'}</span>
      </header>
      <Copyable label="Endpoint" value={endpoint} />
      <p className="muted">
        Linked keys: {linked.length ? linked.map((config) => `${config.apiKey.name} (${config.apiKey.keyPrefix}…)`).join(', ') : 'none yet'}
      </p>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          link.mutate();
        }}
      >
        <label>
          Link a key
          <select value={keyChoice} onChange={(event) => setKeyChoice(event.target.value)}>
            {server.functions.length === 0 && <option value="">Choose one of your keys</option>}
            <option value="new" disabled={server.functions.length === 0}>
              {server.functions.length > MAX_TOOLS_BY_NAME ? "A new key for the project's functions" : 'A new key for these tools only'}
            </option>
            {keys.data?.map((item) => (
              <option key={item.id} value={item.id}>
                {item.name} ({item.keyPrefix}…)
              </option>
            ))}
          </select>
        </label>
        <WriteButton type="submit" disabled={link.isPending || !keyChoice || (keyChoice === 'new' && server.functions.length === 0)}>
          Link
        </WriteButton>
      </form>
      {server.functions.length === 0 && (
        <p className="muted">
          No tools yet: assign functions to this server, then a new key can be made for them (or link a key of yours).
        </p>
      )}
      {server.functions.length > MAX_TOOLS_BY_NAME && (
        <p className="muted">
          More than {MAX_TOOLS_BY_NAME} tools: a new key names no single function, so it may read and execute every function of the project.
        </p>
      )}
      <ErrorLine error={link.error} />
      {secret && <p className="notice">The new key's secret is in the configs below, and only here: copy one now.</p>}
      {(linked.length > 0 || secret) && (
        <details open={!!secret}>
          <summary>Client configs</summary>
          <Copyable label="Claude Desktop" multiline value={claudeDesktop(server.slug, endpoint, key)} />
          <Copyable label="Cursor" multiline value={cursor(server.slug, endpoint, key)} />
          <Copyable label="VS Code" multiline value={vsCode(server.slug, endpoint, key)} />
          <Copyable label="MCP Inspector" multiline value={inspector(endpoint, key)} />
          <p className="muted">
            Streamable HTTP at the endpoint; clients of the older HTTP+SSE transport use the same URL (GET with Accept: text/event-stream).
          </p>
        </details>
      )}
    </article>
  );
}

/** A key holds at most 200 grants (the API's bound): two per tool up to here. */
const MAX_TOOLS_BY_NAME = 100;

/**
 * What a new key linked to a server may do: read each of its functions and execute what each runs
 * (the pipeline version it was imported from, else the function itself), nothing else. A function
 * assigned later, or imported again from a newer version, needs a key made again. A server of more
 * than `MAX_TOOLS_BY_NAME` tools gets a key that may read and execute every function of the project.
 */
async function toolPermissions(slug: string, functions: readonly { id: string }[]) {
  const project = await bf.projects.get.query({ project: slug });
  if (functions.length > MAX_TOOLS_BY_NAME) {
    return [`${project.id}.functions.read`, `${project.id}.functions.execute`, `${project.id}.pipelineRuns.execute`];
  }
  // The project's functions a page at a time (a list answers each one's source version), not one request per tool.
  const wanted = new Set(functions.map((fn) => fn.id));
  const found = [];
  for (let offset = 0; found.length < wanted.size; offset += 200) {
    const page = await bf.functions.list.query({ project: slug, limit: 200, offset });
    found.push(...page.filter((fn) => wanted.has(fn.id)));
    if (page.length < 200) break;
  }
  return found.flatMap((fn) => [
    `${project.id}.functions.read.${fn.id}`,
    fn.sourcePipelineVersionId
      ? `${project.id}.pipelineRuns.execute.${fn.sourcePipelineVersionId}`
      : `${project.id}.functions.execute.${fn.id}`,
  ]);
}

const json = (value: unknown) => JSON.stringify(value, null, 2);
// Claude Desktop starts local (stdio) servers: mcp-remote bridges to the HTTP endpoint.
const claudeDesktop = (name: string, url: string, key: string) =>
  json({ mcpServers: { [name]: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', `x-api-key:${key}`] } } });
const cursor = (name: string, url: string, key: string) => json({ mcpServers: { [name]: { url, headers: { 'x-api-key': key } } } });
const vsCode = (name: string, url: string, key: string) =>
  json({ servers: { [name]: { type: 'http', url, headers: { 'x-api-key': key } } } });
const inspector = (url: string, key: string) =>
  `npx @modelcontextprotocol/inspector --cli ${url} --transport http --header "x-api-key: ${key}" --method tools/list`;
