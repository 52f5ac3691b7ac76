/**
 * What every request looks up before it can decide anything — an API key with its user, a sign-in
 * session with its user, the project a path names — kept in this api process between requests.
 *
 * The database stays the truth: triggers on those tables (db/migrations, `notify_access_change`)
 * NOTIFY a tag naming what changed (`key:<id>`, `user:<id>`, `session:<id>`, `project:<id>`, or
 * `all`) in the transaction that changes it, so PostgreSQL delivers it on commit to every api
 * process (server/auth/accessChanges.ts), which drops every entry carrying that tag. No write path
 * can forget: the trigger sees each one.
 *
 * Two rules keep a stale entry from ever answering:
 * - Entries are served only while the process is known to be hearing those notifications
 *   (`resume`). When it stops hearing them (`suspend`: the LISTEN connection dropped) the cache is
 *   emptied and bypassed, and emptied again when listening resumes, since changes may have been
 *   missed in between.
 * - A load that an invalidation overtook is not kept: it may have read the row before the change
 *   committed and finished after its notification was handled. Every invalidation moves
 *   `generation` on; a load keeps its result only if the generation it started in is still current.
 */

export type Loaded<T> = { value: T; tags: readonly string[] };

type Entry = { value: unknown; tags: readonly string[] };

/** Enough for every key, session and project a busy process sees; the oldest entries go first. */
const DEFAULT_MAX_ENTRIES = 20_000;

export class AccessCache {
  readonly #entries = new Map<string, Entry>();
  /** For each tag, the keys of the entries that carry it. */
  readonly #byTag = new Map<string, Set<string>>();
  readonly #maxEntries: number;
  #generation = 0;
  #live = false;
  #held: Promise<void> | undefined;

  constructor(options: { maxEntries?: number } = {}) {
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /** Whether entries are being served: true only while changes are being heard. */
  get live() {
    return this.#live;
  }

  get size() {
    return this.#entries.size;
  }

  /**
   * Set while a change this process made is not yet known to be heard by every api process
   * (server/auth/accessChanges.ts); the app's answers wait for it, so a caller who has the answer
   * cannot reach another process before the change does.
   */
  get held(): Promise<void> | undefined {
    return this.#held;
  }

  holdAnswersUntil(settled: Promise<void>) {
    const held = settled.finally(() => {
      if (this.#held === held) this.#held = undefined;
    });
    this.#held = held;
  }

  /**
   * The value under `key`: from memory while live, else from `load` (null: nothing to keep, as for
   * a key or project that does not exist — misses are not remembered, so a row created later is
   * found at once).
   */
  async read<T>(key: string, load: () => Promise<Loaded<T> | null>): Promise<T | null> {
    if (this.#live) {
      const hit = this.#entries.get(key);
      if (hit) return hit.value as T;
    }
    const generation = this.#generation;
    const loaded = await load();
    if (!loaded) return null;
    if (this.#live && generation === this.#generation) this.#store(key, loaded);
    return loaded.value;
  }

  /** A notification: `all`, or a tag whose entries are dropped. */
  invalidate(tag: string) {
    this.#generation++;
    if (tag === 'all') {
      this.#clear();
      return;
    }
    const keys = this.#byTag.get(tag);
    if (!keys) return;
    for (const key of [...keys]) this.#delete(key);
  }

  /** Changes are heard (again): what was kept before may have missed some, so it goes. */
  resume() {
    this.#generation++;
    this.#clear();
    this.#live = true;
  }

  /** Changes are no longer heard: nothing is served from memory until `resume`. */
  suspend() {
    this.#generation++;
    this.#live = false;
    this.#clear();
  }

  #store(key: string, entry: Entry) {
    this.#delete(key);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#delete(oldest.value);
    }
    this.#entries.set(key, entry);
    for (const tag of entry.tags) {
      const keys = this.#byTag.get(tag);
      if (keys) keys.add(key);
      else this.#byTag.set(tag, new Set([key]));
    }
  }

  #delete(key: string) {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    for (const tag of entry.tags) {
      const keys = this.#byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.#byTag.delete(tag);
    }
  }

  #clear() {
    this.#entries.clear();
    this.#byTag.clear();
  }
}
