import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../../access.tsx';
import { bf, type Resource, type RouterInputs, type Session } from '../../api.ts';
import { Downloads } from '../../components/Downloads.tsx';
import { LiveLogs } from '../../components/LiveLogs.tsx';
import { ConfirmButton, Copyable, ErrorLine, Loaded, usePagedList, when } from '../../components/parts.tsx';
import { Recording } from '../../components/RecordingPlayer.tsx';
import { trpc } from '../../trpc.ts';

/** The project's sessions, a page at a time: each with its settings and running browsers, and a form that creates one. */
export function SessionsTab({ slug }: { slug: string }) {
  const queries = useQueryClient();
  const sessions = usePagedList(
    (page) => trpc.sessions.list.queryOptions({ project: slug, ...page }, { refetchInterval: 5_000 }),
    'sessions',
  );
  const [name, setName] = useState('');
  const [settings, setSettings] = useState<SessionSettings>(noSettings);
  const [settingsError, setSettingsError] = useState<string | null>(null);
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
      setSettingsError(null);
      create.mutate(settingsBody(settings));
    } catch (error) {
      setSettingsError((error as Error).message);
    }
  };
  return (
    <section>
      <h2>Sessions</h2>
      <p className="muted">A session keeps a browser's settings and cookies; each start gives it a fresh browser.</p>
      <Loaded query={sessions}>
        {(rows) =>
          rows.length === 0 ? (
            <p className="muted">No sessions yet.</p>
          ) : (
            rows.map((session) => <SessionCard key={session.id} slug={slug} session={session} />)
          )
        }
      </Loaded>
      {sessions.pager}
      <form onSubmit={submit} className="row" aria-label="new session">
        <label>
          New session
          <input required placeholder="name" value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <WriteButton type="submit" disabled={create.isPending}>
          Create session
        </WriteButton>
        <SettingsFields settings={settings} onChange={setSettings} />
      </form>
      {settingsError && <p className="error">{settingsError}</p>}
      <ErrorLine error={create.error} />
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
  return (
    <article className="card" aria-label={`session ${session.name}`}>
      <header className="row">
        <strong>{session.name}</strong>
        <span className={`status ${session.status}`}>{session.status}</span>
        <span className="muted">last started {when(session.manager.lastStarted)}</span>
        <WriteButton type="button" onClick={() => start.mutate()} disabled={start.isPending}>
          Start a browser
        </WriteButton>
      </header>
      <ErrorLine error={start.error} />
      <SessionEditor slug={slug} session={session} onChange={refresh} />
      {browsers.map((resource) => (
        <Browser key={resource.id} slug={slug} sessionId={session.id} resource={resource} recorded={session.record} onChange={refresh} />
      ))}
    </article>
  );
}

/** A running browser: how to connect to it, and its stop. */
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
    <section className="browser" aria-label={`browser ${resource.id}`}>
      <p className="row">
        <span className={`status ${resource.status}`}>{resource.status}</span>
        <span className="muted">
          on {resource.host ?? '—'} since {when(resource.started)}, until {when(resource.expires)}
        </span>
        {resource.vncUrl && (
          <a href={resource.vncUrl} target="_blank" rel="noreferrer">
            Live view in a tab
          </a>
        )}
        <WriteButton type="button" onClick={() => stop.mutate()} disabled={stop.isPending}>
          Stop
        </WriteButton>
      </p>
      <ErrorLine error={stop.error} />
      {resource.vncUrl && (
        <details>
          <summary>Live view</summary>
          <iframe className="live" title={`live view of ${resource.id}`} src={resource.vncUrl} />
        </details>
      )}
      {recorded && (
        <details>
          <summary>Recording</summary>
          <Recording slug={slug} sessionId={sessionId} resourceId={resource.id} />
        </details>
      )}
      <details>
        <summary>Downloads</summary>
        <Downloads slug={slug} sessionId={sessionId} resourceId={resource.id} live />
      </details>
      <details>
        <summary>Logs</summary>
        <LiveLogs
          url={`/${encodeURIComponent(slug)}/api/sessions/${encodeURIComponent(sessionId)}/${encodeURIComponent(resource.id)}/logs`}
        />
      </details>
      {resource.remoteUrl && (
        <>
          <Copyable label="CDP URL" value={resource.remoteUrl} />
          <Copyable label="Playwright" multiline value={playwrightSnippet(resource.remoteUrl)} />
          <Copyable label="Puppeteer" multiline value={puppeteerSnippet(resource.remoteUrl)} />
        </>
      )}
    </section>
  );
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

/** The optional part of a new session, as the API takes it; a malformed field throws its message. */
function settingsBody(settings: SessionSettings) {
  const body: SessionExtras = {};
  if (settings.persist) body.persist = true;
  if (settings.width || settings.height) body.screen = { width: Number(settings.width || 1280), height: Number(settings.height || 720) };
  if (settings.proxy) {
    let url: URL;
    try {
      url = new URL(settings.proxy);
    } catch {
      throw new Error('The proxy is a URL such as http://proxy.example:8080 or socks5://proxy.example:1080');
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
    try {
      body.cookies = JSON.parse(settings.cookies) as SessionExtras['cookies'];
    } catch {
      throw new Error('Cookies are a JSON list, e.g. [{"name": "sid", "value": "…", "domain": "shop.example", "path": "/"}]');
    }
  }
  if (settings.record) body.record = true;
  return body;
}

/** Screen size, locale, timezone and fingerprint, a proxy (its password as a password field) and cookies for a new session. */
function SettingsFields({ settings, onChange }: { settings: SessionSettings; onChange: (settings: SessionSettings) => void }) {
  const field = (key: Exclude<keyof SessionSettings, 'persist' | 'record'>) => ({
    value: settings[key],
    onChange: (event: { target: { value: string } }) => onChange({ ...settings, [key]: event.target.value }),
  });
  return (
    <details className="wide">
      <summary>Screen, proxy and cookies</summary>
      <label className="inline">
        <input type="checkbox" checked={settings.persist} onChange={(event) => onChange({ ...settings, persist: event.target.checked })} />
        Keep the browser's profile between starts (cookies, localStorage, IndexedDB, service workers; one browser at a time)
      </label>
      <div className="row">
        <label>
          Screen width
          <input inputMode="numeric" placeholder="1280" {...field('width')} />
        </label>
        <label>
          Screen height
          <input inputMode="numeric" placeholder="720" {...field('height')} />
        </label>
      </div>
      <div className="row">
        <label>
          Locale
          <input placeholder="en-US" {...field('locale')} />
        </label>
        <label>
          Timezone
          <input placeholder="UTC" {...field('timezone')} />
        </label>
        <label>
          Fingerprint
          <select {...field('fingerprint')}>
            <option value="">desktop (default)</option>
            <option value="desktop">desktop: not flagged as automated</option>
            <option value="automation">automation: Chromium's honest headless defaults</option>
          </select>
        </label>
      </div>
      <div className="row">
        <label>
          Proxy
          <input placeholder="http://proxy.example:8080" {...field('proxy')} />
        </label>
        <label>
          Proxy user
          <input autoComplete="off" {...field('proxyUsername')} />
        </label>
        <label>
          Proxy password (again, when the proxy changes)
          <input type="password" autoComplete="new-password" {...field('proxyPassword')} />
        </label>
      </div>
      <label>
        Cookies (JSON)
        <textarea
          rows={3}
          spellCheck={false}
          placeholder='[{"name": "sid", "value": "…", "domain": "shop.example", "path": "/"}]'
          {...field('cookies')}
        />
      </label>
      <label>
        <input type="checkbox" checked={settings.record} onChange={(event) => onChange({ ...settings, record: event.target.checked })} />{' '}
        Record its browsers' pages (rrweb)
      </label>
    </details>
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
  const [problem, setProblem] = useState<string | null>(null);
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
      setProblem((error as Error).message);
    }
  };
  return (
    <details>
      <summary>Settings</summary>
      <form onSubmit={submit} className="stack" aria-label={`settings of ${session.name}`}>
        <label>
          Name
          <input required value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <SettingsFields settings={settings} onChange={setSettings} />
        <p className="muted">Cookies typed here replace the session's; left empty, they stay as they are.</p>
        <div className="row">
          <WriteButton type="submit" disabled={save.isPending}>
            Save settings
          </WriteButton>
          <ConfirmButton
            Button={WriteButton}
            question={`Delete ${session.name}? This cannot be undone.`}
            yes="Yes, delete"
            onConfirm={() => remove.mutate()}
            disabled={remove.isPending}
          >
            Delete the session
          </ConfirmButton>
        </div>
        {save.isSuccess && <p role="status">Saved: the next browser started uses them.</p>}
        {problem && <p className="error">{problem}</p>}
        <ErrorLine error={save.error ?? remove.error} />
      </form>
    </details>
  );
}
