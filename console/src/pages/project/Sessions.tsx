import {
  Accordion,
  Anchor,
  Box,
  Button,
  Card,
  Checkbox,
  Group,
  NativeSelect,
  Paper,
  PasswordInput,
  SimpleGrid,
  Stack,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { modals } from '@mantine/modals';
import { IconExternalLink, IconPlayerPlay, IconPlayerStop, IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useRef, useState } from 'react';
import { useProjectAccess, WriteButton } from '../../access.tsx';
import { bf, type Resource, type RouterInputs, type Session } from '../../api.ts';
import { Empty } from '../../components/DataTable.tsx';
import { Downloads } from '../../components/Downloads.tsx';
import { LiveLogs } from '../../components/LiveLogs.tsx';
import { ConfirmButton, Copyable, ErrorLine, fieldError, Loaded, StateBadge, usePagedList, when } from '../../components/parts.tsx';
import { Recording } from '../../components/RecordingPlayer.tsx';
import { trpc } from '../../trpc.ts';

/** The project's sessions, a page at a time: each with its settings and running browsers, and a form that creates one. */
export function SessionsTab({ slug }: { slug: string }) {
  const queries = useQueryClient();
  const access = useProjectAccess();
  const sessions = usePagedList(
    (page) => trpc.sessions.list.queryOptions({ project: slug, ...page }, { refetchInterval: 5_000 }),
    'sessions',
  );
  const [name, setName] = useState('');
  const nameInput = useRef<HTMLInputElement>(null);
  const [settings, setSettings] = useState<SessionSettings>(noSettings);
  const [problem, setProblem] = useState<FieldProblem | null>(null);
  const create = useMutation({
    mutationFn: (extra: SessionExtras) => bf.sessions.create.mutate({ project: slug, name, ...extra }),
    onSuccess: () => {
      setName('');
      setSettings(noSettings);
      return queries.invalidateQueries({ queryKey: trpc.sessions.list.queryKey({ project: slug }) });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      setProblem(null);
      create.mutate(settingsBody(settings));
    } catch (error) {
      setProblem(error as FieldProblem);
    }
  };
  return (
    <section aria-labelledby="sessions-title">
      <Title order={2} size="h3" id="sessions-title">
        Sessions
      </Title>
      <Text size="sm" c="dimmed" mb="md">
        A session keeps a browser's settings and cookies; each start gives it a fresh browser.
      </Text>
      <Loaded query={sessions}>
        {(rows) =>
          rows.length === 0 ? (
            <Empty
              title="No sessions yet"
              text="Name a session below and create it; then start a browser in it and connect with the CDP URL it shows."
              action={access.readOnly ? undefined : { label: 'Name the first session', onClick: () => nameInput.current?.focus() }}
            />
          ) : (
            <Stack gap="md">
              {rows.map((session) => (
                <SessionCard key={session.id} slug={slug} session={session} />
              ))}
            </Stack>
          )
        }
      </Loaded>
      {sessions.pager}
      <Paper withBorder p="md" mt="lg" radius="md" component="form" onSubmit={submit} aria-label="new session">
        <Group align="flex-end" gap="sm">
          <TextInput
            ref={nameInput}
            label="New session"
            required
            placeholder="name"
            value={name}
            onChange={(event) => setName(event.currentTarget.value)}
            error={fieldError(create.error, ['name'])}
          />
          <WriteButton type="submit" loading={create.isPending} leftSection={<IconPlus size={16} />}>
            Create session
          </WriteButton>
        </Group>
        <SettingsFields settings={settings} onChange={setSettings} error={create.error} problem={problem} />
        <ErrorLine error={create.error} />
      </Paper>
    </section>
  );
}

function SessionCard({ slug, session }: { slug: string; session: Session }) {
  const queries = useQueryClient();
  const running = session.manager.runningResources > 0;
  const detail = useQuery(
    trpc.sessions.get.queryOptions(
      { project: slug, sessionId: session.id },
      { enabled: running, refetchInterval: running ? 3_000 : false },
    ),
  );
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: trpc.sessions.list.queryKey({ project: slug }) }),
      queries.invalidateQueries({ queryKey: trpc.sessions.get.queryKey({ project: slug, sessionId: session.id }) }),
    ]);
  const start = useMutation({ mutationFn: () => bf.resources.start.mutate({ project: slug, sessionId: session.id }), onSuccess: refresh });
  const browsers = (detail.data?.resources ?? []).filter((resource) => resource.status === 'running' || resource.status === 'starting');
  const browsersBox = useRef<HTMLDivElement>(null);
  // A running session offers what it has; a second browser only when asked for, and confirmed.
  const startAnother = () =>
    modals.openConfirmModal({
      title: 'Start a second browser?',
      children: (
        <Text size="sm">
          {session.name} already has a browser running. A second one runs beside it, with its own CDP URL, and is charged as well.
        </Text>
      ),
      labels: { confirm: 'Start a second browser', cancel: 'Cancel' },
      confirmProps: { 'data-autofocus': true },
      onConfirm: () => start.mutate(),
    });
  return (
    <Card withBorder radius="md" padding="md" component="article" aria-label={`session ${session.name}`}>
      <Group justify="space-between" gap="sm" wrap="wrap">
        <Group gap="sm" miw={0}>
          <Text fw={600} truncate="end" maw={260}>
            {session.name}
          </Text>
          <StateBadge state={session.status} />
          <Text size="sm" c="dimmed">
            last started {when(session.manager.lastStarted)}
          </Text>
        </Group>
        {browsers.length > 0 ? (
          <Group gap="xs">
            <Button
              size="sm"
              leftSection={<IconPlayerPlay size={16} />}
              onClick={() => browsersBox.current?.scrollIntoView({ behavior: 'smooth', block: 'start' })}
            >
              Go to the live view
            </Button>
            <WriteButton size="sm" variant="default" onClick={startAnother} disabled={start.isPending}>
              Start another browser
            </WriteButton>
          </Group>
        ) : (
          <WriteButton size="sm" onClick={() => start.mutate()} loading={start.isPending} leftSection={<IconPlayerPlay size={16} />}>
            Start a browser
          </WriteButton>
        )}
      </Group>
      <ErrorLine error={start.error} />
      <Box ref={browsersBox}>
        {browsers.map((resource) => (
          <Browser key={resource.id} slug={slug} sessionId={session.id} resource={resource} recorded={session.record} onChange={refresh} />
        ))}
      </Box>
      <SessionEditor slug={slug} session={session} onChange={refresh} />
    </Card>
  );
}

/**
 * A running browser: its live view, and beside it from 1200 px (below it on a narrower screen) how
 * to connect to it, its log and its recording; and its stop.
 */
function Browser({
  slug,
  sessionId,
  resource,
  recorded,
  onChange,
}: {
  slug: string;
  sessionId: string;
  resource: Resource;
  recorded: boolean;
  onChange: () => unknown;
}) {
  const stop = useMutation({
    mutationFn: () => bf.resources.stop.mutate({ project: slug, sessionId, resourceId: resource.id }),
    onSuccess: onChange,
  });
  return (
    <Box
      component="section"
      aria-label={`browser ${resource.id}`}
      mt="md"
      pt="sm"
      style={{ borderTop: '1px solid var(--mantine-color-default-border)' }}
    >
      <Group gap="sm" mb="sm" wrap="wrap">
        <StateBadge state={resource.status} />
        <Text size="sm" c="dimmed" style={{ minWidth: 0, overflowWrap: 'anywhere' }}>
          on {resource.host ?? '—'} since {when(resource.started)}, until {when(resource.expires)}
        </Text>
        <WriteButton
          size="xs"
          color="red"
          variant="light"
          onClick={() => stop.mutate()}
          loading={stop.isPending}
          leftSection={<IconPlayerStop size={14} />}
        >
          Stop
        </WriteButton>
      </Group>
      <ErrorLine error={stop.error} />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="md">
        <Box miw={0}>
          {resource.vncUrl ? (
            <>
              <Group justify="space-between" mb={4}>
                <Text fw={500}>Live view</Text>
                <Anchor href={resource.vncUrl} target="_blank" rel="noreferrer" size="sm">
                  <Group gap={4} renderRoot={(props) => <span {...props} />}>
                    Live view in a tab <IconExternalLink size={14} />
                  </Group>
                </Anchor>
              </Group>
              <LiveFrame key={resource.id} resourceId={resource.id} url={resource.vncUrl} />
            </>
          ) : (
            <Text size="sm" c="dimmed">
              The live view shows once the browser is up.
            </Text>
          )}
        </Box>
        <Tabs defaultValue="connect" keepMounted miw={0}>
          <Tabs.List>
            <Tabs.Tab value="connect">Connect</Tabs.Tab>
            <Tabs.Tab value="logs">Logs</Tabs.Tab>
            {recorded && <Tabs.Tab value="recording">Recording</Tabs.Tab>}
            <Tabs.Tab value="downloads">Downloads</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="connect" pt="xs">
            {resource.remoteUrl ? (
              <>
                <Copyable label="CDP URL" value={resource.remoteUrl} />
                <Copyable label="Playwright" multiline value={playwrightSnippet(resource.remoteUrl)} />
                <Copyable label="Puppeteer" multiline value={puppeteerSnippet(resource.remoteUrl)} />
              </>
            ) : (
              <Text size="sm" c="dimmed">
                Its CDP URL shows once the browser is up.
              </Text>
            )}
          </Tabs.Panel>
          <Tabs.Panel value="logs" pt="xs">
            <LiveLogs
              url={`/${encodeURIComponent(slug)}/api/sessions/${encodeURIComponent(sessionId)}/${encodeURIComponent(resource.id)}/logs`}
            />
          </Tabs.Panel>
          {recorded && (
            <Tabs.Panel value="recording" pt="xs">
              <Recording slug={slug} sessionId={sessionId} resourceId={resource.id} />
            </Tabs.Panel>
          )}
          <Tabs.Panel value="downloads" pt="xs">
            <Downloads slug={slug} sessionId={sessionId} resourceId={resource.id} live />
          </Tabs.Panel>
        </Tabs>
      </SimpleGrid>
    </Box>
  );
}

/**
 * The embedded live view. Its address carries a fresh token each time the session is read again
 * (every few seconds): the frame keeps the first one, since a new `src` would reload the view,
 * dropping its connection and whatever was typed in its bar. The token is checked when it connects.
 */
function LiveFrame({ resourceId, url }: { resourceId: string; url: string }) {
  const [first] = useState(url);
  return <iframe className="live" title={`live view of ${resourceId}`} src={first} />;
}

const playwrightSnippet = (url: string) => `import { chromium } from 'playwright';

const browser = await chromium.connectOverCDP('${url}');
const context = browser.contexts()[0] ?? (await browser.newContext());
const page = context.pages()[0] ?? (await context.newPage());
await page.goto('https://example.com');
console.log(await page.title());
await browser.close();`;

const puppeteerSnippet = (url: string) => `import puppeteer from 'puppeteer-core';

const browser = await puppeteer.connect({ browserWSEndpoint: '${url}' });
const [page] = await browser.pages();
await page.goto('https://example.com');
console.log(await page.title());
await browser.disconnect();`;

/** What a new session takes besides its project and name. */
type SessionExtras = Omit<RouterInputs['sessions']['create'], 'project' | 'name'>;

type SessionSettings = {
  width: string;
  height: string;
  proxy: string;
  proxyUsername: string;
  proxyPassword: string;
  cookies: string;
  /** Keep the browser's profile across starts (docs/sessions-and-proxies.md, Profiles that persist). */
  persist: boolean;
  locale: string;
  timezone: string;
  fingerprint: string;
  /** Record its browsers' pages with rrweb (docs/browsers.md, Recordings). */
  record: boolean;
};
const noSettings: SessionSettings = {
  width: '',
  height: '',
  proxy: '',
  proxyUsername: '',
  proxyPassword: '',
  cookies: '',
  persist: false,
  locale: '',
  timezone: '',
  fingerprint: '',
  record: false,
};

/** A field of the form the console itself could not read, with what to type instead. */
class FieldProblem extends Error {
  constructor(
    readonly field: keyof SessionSettings,
    message: string,
  ) {
    super(message);
  }
}

/** The optional part of a new session, as the API takes it; a malformed field throws a FieldProblem. */
function settingsBody(settings: SessionSettings) {
  const body: SessionExtras = {};
  if (settings.persist) body.persist = true;
  if (settings.width || settings.height) body.screen = { width: Number(settings.width || 1280), height: Number(settings.height || 720) };
  if (settings.proxy) {
    let url: URL;
    try {
      url = new URL(settings.proxy);
    } catch {
      throw new FieldProblem('proxy', 'The proxy is a URL such as http://proxy.example:8080 or socks5://proxy.example:1080');
    }
    // The service checks every field; a wrong one comes back as its 400.
    body.proxy = {
      protocol: url.protocol.replace(/:$/, ''),
      hostname: url.hostname,
      port: Number(url.port || { 'https:': 443, 'socks5:': 1080 }[url.protocol] || 80),
      ...(settings.proxyUsername ? { username: settings.proxyUsername, password: settings.proxyPassword } : {}),
    } as SessionExtras['proxy'];
  }
  if (settings.locale) body.locale = settings.locale;
  if (settings.timezone) body.timezone = settings.timezone;
  if (settings.fingerprint) body.fingerprint = settings.fingerprint as SessionExtras['fingerprint'];
  if (settings.cookies.trim()) {
    let cookies: unknown;
    try {
      cookies = JSON.parse(settings.cookies);
    } catch {
      throw new FieldProblem('cookies', 'This is not JSON: cookies are a list of objects, each with a name, value, domain and path.');
    }
    if (!Array.isArray(cookies))
      throw new FieldProblem('cookies', 'Cookies are a list (in square brackets) of objects, each with a name, value, domain and path.');
    body.cookies = cookies as SessionExtras['cookies'];
  }
  if (settings.record) body.record = true;
  return body;
}

/**
 * Screen size, locale, timezone and fingerprint, a proxy (its password as a password field) and
 * cookies for a session, folded away until asked for; each field with what was wrong with it, said
 * by the console (`problem`) or by the service (`error`'s issues).
 */
function SettingsFields({
  settings,
  onChange,
  error,
  problem,
}: {
  settings: SessionSettings;
  onChange: (settings: SessionSettings) => void;
  error: unknown;
  problem: FieldProblem | null;
}) {
  const field = (key: Exclude<keyof SessionSettings, 'persist' | 'record'>) => ({
    value: settings[key],
    onChange: (event: { currentTarget: { value: string } }) => onChange({ ...settings, [key]: event.currentTarget.value }),
  });
  const said = (key: keyof SessionSettings, ...path: string[]) =>
    (problem?.field === key ? problem.message : undefined) ?? fieldError(error, path);
  const cookiesSaid = said('cookies', 'cookies');
  const proxySaid = said('proxy', 'proxy');
  return (
    <Accordion variant="contained" mt="sm" defaultValue={cookiesSaid || proxySaid ? 'more' : null}>
      <Accordion.Item value="more">
        <Accordion.Control>Screen, proxy and cookies</Accordion.Control>
        <Accordion.Panel>
          <Stack gap="sm">
            <Checkbox
              checked={settings.persist}
              onChange={(event) => onChange({ ...settings, persist: event.currentTarget.checked })}
              label="Keep the browser's profile between starts (cookies, localStorage, IndexedDB, service workers; one browser at a time)"
            />
            <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="sm">
              <TextInput
                label="Screen width"
                inputMode="numeric"
                placeholder="1280"
                {...field('width')}
                error={said('width', 'screen', 'width')}
              />
              <TextInput
                label="Screen height"
                inputMode="numeric"
                placeholder="720"
                {...field('height')}
                error={said('height', 'screen', 'height')}
              />
              <TextInput label="Locale" placeholder="en-US" {...field('locale')} error={said('locale', 'locale')} />
              <TextInput label="Timezone" placeholder="UTC" {...field('timezone')} error={said('timezone', 'timezone')} />
              <NativeSelect
                label="Fingerprint"
                {...field('fingerprint')}
                error={said('fingerprint', 'fingerprint')}
                data={[
                  { value: '', label: 'desktop (default)' },
                  { value: 'desktop', label: 'desktop: not flagged as automated' },
                  { value: 'automation', label: "automation: Chromium's honest headless defaults" },
                ]}
              />
            </SimpleGrid>
            <SimpleGrid cols={{ base: 1, md: 3 }} spacing="sm">
              <TextInput label="Proxy" placeholder="http://proxy.example:8080" {...field('proxy')} error={proxySaid} />
              <TextInput
                label="Proxy user"
                autoComplete="off"
                {...field('proxyUsername')}
                error={said('proxyUsername', 'proxy', 'username')}
              />
              <PasswordInput
                label="Proxy password"
                description="Again, when the proxy changes"
                autoComplete="new-password"
                {...field('proxyPassword')}
                error={said('proxyPassword', 'proxy', 'password')}
              />
            </SimpleGrid>
            <Textarea
              label="Cookies (JSON)"
              description="A list of cookies, each with a name, value, domain and path"
              autosize
              minRows={3}
              spellCheck={false}
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              placeholder='[{"name": "sid", "value": "…", "domain": "shop.example", "path": "/"}]'
              {...field('cookies')}
              error={cookiesSaid}
            />
            <Checkbox
              checked={settings.record}
              onChange={(event) => onChange({ ...settings, record: event.currentTarget.checked })}
              label="Record its browsers' pages (rrweb)"
            />
          </Stack>
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}

/** The settings a session was made with, as the form shows them (a proxy's password is never shown). */
function settingsOf(session: Session): SessionSettings {
  const proxy = session.proxy;
  return {
    width: String(session.screen.width),
    height: String(session.screen.height),
    proxy: proxy ? `${proxy.protocol}://${proxy.hostname}:${proxy.port}` : '',
    proxyUsername: proxy?.username ?? '',
    proxyPassword: '',
    cookies: '',
    persist: session.persist,
    locale: session.locale,
    timezone: session.timezone,
    fingerprint: session.fingerprint,
    record: session.record,
  };
}

/**
 * A session's settings changed after it was made: only what was edited is sent (a proxy left as
 * it is keeps its password); an emptied proxy removes it. The next browser started uses them.
 * Deleting the session stops its browsers.
 */
function SessionEditor({ slug, session, onChange }: { slug: string; session: Session; onChange: () => unknown }) {
  const initial = settingsOf(session);
  const [name, setName] = useState(session.name);
  const [settings, setSettings] = useState<SessionSettings>(initial);
  const [problem, setProblem] = useState<FieldProblem | null>(null);
  const save = useMutation({
    mutationFn: (body: SessionExtras) =>
      bf.sessions.update.mutate({ project: slug, sessionId: session.id, ...(name !== session.name ? { name } : {}), ...body }),
    onSuccess: onChange,
  });
  const remove = useMutation({
    mutationFn: () => bf.sessions.delete.mutate({ project: slug, sessionId: session.id }),
    onSuccess: onChange,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      setProblem(null);
      const changed = (keys: (keyof SessionSettings)[]) => keys.some((key) => settings[key] !== initial[key]);
      const body = settingsBody({
        ...noSettings,
        ...(changed(['width', 'height']) ? { width: settings.width, height: settings.height } : {}),
        ...(changed(['proxy', 'proxyUsername', 'proxyPassword'])
          ? { proxy: settings.proxy, proxyUsername: settings.proxyUsername, proxyPassword: settings.proxyPassword }
          : {}),
        cookies: settings.cookies,
        ...(changed(['locale', 'timezone', 'fingerprint'])
          ? { locale: settings.locale, timezone: settings.timezone, fingerprint: settings.fingerprint }
          : {}),
      });
      if (changed(['proxy']) && !settings.proxy) body.proxy = null;
      if (changed(['persist'])) body.persist = settings.persist;
      if (changed(['record'])) body.record = settings.record;
      save.mutate(body);
    } catch (error) {
      setProblem(error as FieldProblem);
    }
  };
  return (
    <Accordion variant="separated" mt="md">
      <Accordion.Item value="settings">
        <Accordion.Control>Settings</Accordion.Control>
        <Accordion.Panel>
          <Stack renderRoot={(props) => <form {...props} />} onSubmit={submit} gap="sm" aria-label={`settings of ${session.name}`}>
            <TextInput
              label="Name"
              required
              value={name}
              onChange={(event) => setName(event.currentTarget.value)}
              error={fieldError(save.error, ['name'])}
            />
            <SettingsFields settings={settings} onChange={setSettings} error={save.error} problem={problem} />
            <Text size="sm" c="dimmed">
              Cookies typed here replace the session's; left empty, they stay as they are.
            </Text>
            <Group gap="sm">
              <WriteButton type="submit" loading={save.isPending}>
                Save settings
              </WriteButton>
              <ConfirmButton
                Button={WriteButton}
                question={`Delete ${session.name}? Its running browsers stop. This cannot be undone.`}
                yes="Yes, delete"
                onConfirm={() => remove.mutate()}
                disabled={remove.isPending}
              >
                Delete the session
              </ConfirmButton>
            </Group>
            {save.isSuccess && <Text role="status">Saved: the next browser started uses them.</Text>}
            <ErrorLine error={save.error ?? remove.error} />
          </Stack>
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}
