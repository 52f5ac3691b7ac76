import { Alert, Box, Card, Checkbox, Code, Group, NativeSelect, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../../access.tsx';
import { bf, type RouterOutputs } from '../../api.ts';
import { ArgumentInput, argsOf } from '../../components/ArgumentInput.tsx';
import { Block, Copyable, ErrorLine, fieldError, Loaded, RunStatus, usePagedList } from '../../components/parts.tsx';
import { trpc } from '../../trpc.ts';
import { CreateFunction } from './CreateFunction.tsx';

type PipelineFunction = RouterOutputs['functions']['list'][number];
type McpServer = RouterOutputs['mcpServers']['list'][number];

/** The project's functions with a "try it" form each, and its MCP servers with their client set-up. */
export function FunctionsTab({ slug }: { slug: string }) {
  const functions = useQuery(trpc.functions.list.queryOptions({ project: slug, limit: 100 }));
  return (
    <>
      <Box component="section">
        <Title order={2} size="h3">
          Functions
        </Title>
        <Text size="sm" c="dimmed" mb="md">
          A function is a pipeline version published with typed parameters and outputs, executed by its slug.
        </Text>
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
      </Box>
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
    <Card withBorder radius="md" component="article" aria-label={`function ${fn.slug}`} mt="md">
      <Group gap="xs" wrap="wrap">
        <Text fw={600}>{fn.name}</Text>
        <Code>{fn.slug}</Code>
        <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
          → {fn.outputs.map((output) => `${output.name}: ${output.refType}`).join(', ') || 'no outputs'}
        </Text>
      </Group>
      {fn.description && (
        <Text size="sm" c="dimmed">
          {fn.description}
        </Text>
      )}
      <Group component="form" onSubmit={submit} align="flex-end" gap="sm" mt="sm" wrap="wrap">
        {fn.parameters.map((parameter) => (
          <ArgumentInput
            key={parameter.name}
            name={parameter.name}
            parameter={parameter}
            value={values[parameter.name] ?? ''}
            onChange={(value) => setValues({ ...values, [parameter.name]: value })}
            error={fieldError(execute.error, ['args', parameter.name])}
          />
        ))}
        <WriteButton type="submit" loading={execute.isPending}>
          Try it
        </WriteButton>
      </Group>
      <ErrorLine error={execute.error} />
      {execute.data && (
        <Stack gap="xs" mt="sm">
          <Group gap="xs">
            <Text size="sm">
              Run <Code>{execute.data.identifier.slice(0, 8)}</Code>:
            </Text>
            <RunStatus status={execute.data.result.status.pipeline} />
          </Group>
          {execute.data.result.error && (
            <Alert color="red" role="alert">
              {execute.data.result.error.message} ({execute.data.result.error.code})
            </Alert>
          )}
          <Block label={`outputs of ${fn.slug}`}>{JSON.stringify(execute.data.outputs, null, 2)}</Block>
        </Stack>
      )}
    </Card>
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
    <Box component="section" mt="xl">
      <Title order={2} size="h3">
        MCP servers
      </Title>
      <Text size="sm" c="dimmed" mb="md">
        An MCP server offers functions to AI agents as tools, to clients whose API key is linked to it.
      </Text>
      <Loaded query={servers}>{(rows) => rows.map((server) => <McpServerCard key={server.id} slug={slug} server={server} />)}</Loaded>
      {servers.pager}
      <Paper
        withBorder
        radius="md"
        p="md"
        mt="md"
        component="form"
        aria-label="new MCP server"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <Text fw={600} mb="xs">
          New MCP server
        </Text>
        <Group gap="sm" align="flex-start" wrap="wrap">
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(event) => setName(event.currentTarget.value)}
            error={fieldError(create.error, ['name'])}
          />
          <TextInput
            label="Server slug"
            required
            value={serverSlug}
            onChange={(event) => setServerSlug(event.currentTarget.value)}
            error={fieldError(create.error, ['slug'])}
          />
        </Group>
        <Checkbox.Group label="Its tools" mt="sm" value={functionIds} onChange={setFunctionIds}>
          <Stack gap={6} mt={6}>
            {functions.length === 0 && (
              <Text size="sm" c="dimmed">
                No functions to offer yet.
              </Text>
            )}
            {functions.map((fn) => (
              <Checkbox key={fn.id} value={fn.id} label={fn.slug} />
            ))}
          </Stack>
        </Checkbox.Group>
        <WriteButton type="submit" loading={create.isPending} mt="md">
          Create MCP server
        </WriteButton>
        <ErrorLine error={create.error} />
      </Paper>
    </Box>
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
    <Card withBorder radius="md" component="article" aria-label={`MCP server ${server.slug}`} mb="md">
      <Group gap="xs" wrap="wrap">
        <Text fw={600}>{server.name}</Text>
        <Code>{server.slug}</Code>
        <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
          tools: {server.functions.map((fn) => fn.slug).join(', ') || 'none'}
        </Text>
      </Group>
      <Copyable label="Endpoint" value={endpoint} />
      <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
        Linked keys: {linked.length ? linked.map((config) => `${config.apiKey.name} (${config.apiKey.keyPrefix}…)`).join(', ') : 'none yet'}
      </Text>
      <Group
        component="form"
        align="flex-end"
        gap="sm"
        mt="xs"
        wrap="wrap"
        onSubmit={(event) => {
          event.preventDefault();
          link.mutate();
        }}
      >
        <NativeSelect
          label="Link a key"
          value={keyChoice}
          onChange={(event) => setKeyChoice(event.currentTarget.value)}
          miw={0}
          maw="100%"
          style={{ flex: '0 1 20rem' }}
        >
          {server.functions.length === 0 && <option value="">Choose one of your keys</option>}
          <option value="new" disabled={server.functions.length === 0}>
            {server.functions.length > MAX_TOOLS_BY_NAME ? "A new key for the project's functions" : 'A new key for these tools only'}
          </option>
          {keys.data?.map((item) => (
            <option key={item.id} value={item.id}>
              {item.name} ({item.keyPrefix}…)
            </option>
          ))}
        </NativeSelect>
        <WriteButton type="submit" loading={link.isPending} disabled={!keyChoice || (keyChoice === 'new' && server.functions.length === 0)}>
          Link
        </WriteButton>
      </Group>
      {server.functions.length === 0 && (
        <Text size="sm" c="dimmed" mt="xs">
          No tools yet: assign functions to this server, then a new key can be made for them (or link a key of yours).
        </Text>
      )}
      {server.functions.length > MAX_TOOLS_BY_NAME && (
        <Text size="sm" c="dimmed" mt="xs">
          More than {MAX_TOOLS_BY_NAME} tools: a new key names no single function, so it may read and execute every function of the project.
        </Text>
      )}
      <ErrorLine error={link.error} />
      {secret && (
        <Alert color="yellow" mt="xs">
          The new key's secret is in the configs below, and only here: copy one now.
        </Alert>
      )}
      {(linked.length > 0 || secret) && (
        <Box component="details" open={!!secret} mt="xs">
          <Text component="summary" fw={500} style={{ cursor: 'pointer' }}>
            Client configs
          </Text>
          <Copyable label="Claude Desktop" multiline value={claudeDesktop(server.slug, endpoint, key)} />
          <Copyable label="Cursor" multiline value={cursor(server.slug, endpoint, key)} />
          <Copyable label="VS Code" multiline value={vsCode(server.slug, endpoint, key)} />
          <Copyable label="MCP Inspector" multiline value={inspector(endpoint, key)} />
          <Text size="sm" c="dimmed">
            Streamable HTTP at the endpoint; clients of the older HTTP+SSE transport use the same URL (GET with Accept: text/event-stream).
          </Text>
        </Box>
      )}
    </Card>
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
