import { describe, expect, it } from 'vitest';
import { AccessCache, type Loaded } from '../../server/auth/accessCache.ts';

/** The access cache's rules on plain values; test/auth/access-changes.test.ts runs it against PostgreSQL. */

function counting<T>(value: T, tags: string[]) {
  let loads = 0;
  const load = async (): Promise<Loaded<T>> => {
    loads++;
    return { value, tags };
  };
  return { load, loads: () => loads };
}

function liveCache(options?: { maxEntries?: number }) {
  const cache = new AccessCache(options);
  cache.resume();
  return cache;
}

describe('the access cache', () => {
  it('serves a loaded value from memory while changes are heard', async () => {
    const cache = liveCache();
    const key = counting('key row', ['key:1', 'user:1']);
    expect(await cache.read('apiKey:a', key.load)).toBe('key row');
    expect(await cache.read('apiKey:a', key.load)).toBe('key row');
    expect(key.loads()).toBe(1);
  });

  it('loads every time, and keeps nothing, before it hears changes or once it stops hearing them', async () => {
    const cache = new AccessCache();
    const key = counting('key row', ['key:1']);
    await cache.read('apiKey:a', key.load);
    await cache.read('apiKey:a', key.load);
    expect(key.loads()).toBe(2);
    expect(cache.size).toBe(0);

    cache.resume();
    await cache.read('apiKey:a', key.load);
    expect(cache.size).toBe(1);
    cache.suspend();
    expect(cache.size).toBe(0);
    await cache.read('apiKey:a', key.load);
    expect(key.loads()).toBe(4);
    expect(cache.size).toBe(0);
  });

  it('starts empty when it hears changes again: what it kept before may have missed some', async () => {
    const cache = liveCache();
    const key = counting('key row', ['key:1']);
    await cache.read('apiKey:a', key.load);
    cache.resume();
    expect(cache.size).toBe(0);
    await cache.read('apiKey:a', key.load);
    expect(key.loads()).toBe(2);
  });

  it('drops every entry carrying a changed tag, and only those', async () => {
    const cache = liveCache();
    const keyOfAda = counting('ada key', ['key:1', 'user:ada']);
    const sessionOfAda = counting('ada session', ['session:1', 'user:ada']);
    const keyOfBob = counting('bob key', ['key:2', 'user:bob']);
    await cache.read('apiKey:a', keyOfAda.load);
    await cache.read('session:1', sessionOfAda.load);
    await cache.read('apiKey:b', keyOfBob.load);

    cache.invalidate('user:ada');
    expect(cache.size).toBe(1);
    await cache.read('apiKey:a', keyOfAda.load);
    await cache.read('session:1', sessionOfAda.load);
    await cache.read('apiKey:b', keyOfBob.load);
    expect([keyOfAda.loads(), sessionOfAda.loads(), keyOfBob.loads()]).toEqual([2, 2, 1]);
  });

  it('drops a project kept under its slug and its id at once', async () => {
    const cache = liveCache();
    const project = counting('project row', ['project:p1']);
    await cache.read('project:shop', project.load);
    await cache.read('project:p1', project.load);
    cache.invalidate('project:p1');
    expect(cache.size).toBe(0);
  });

  it('empties on `all`', async () => {
    const cache = liveCache();
    await cache.read('apiKey:a', counting('a', ['key:1']).load);
    await cache.read('project:p', counting('p', ['project:1']).load);
    cache.invalidate('all');
    expect(cache.size).toBe(0);
  });

  it('does not keep a load that a change overtook: it may have read the row before the change', async () => {
    const cache = liveCache();
    let release: (value: Loaded<string>) => void = () => {};
    const reading = cache.read('apiKey:a', () => new Promise<Loaded<string>>((resolve) => (release = resolve)));
    // The change commits and is heard while the old row is on its way.
    cache.invalidate('key:1');
    release({ value: 'old key row', tags: ['key:1'] });
    expect(await reading).toBe('old key row');
    expect(cache.size).toBe(0);
  });

  it('does not keep a load that a lost connection overtook, even once it is back', async () => {
    const cache = liveCache();
    let release: (value: Loaded<string>) => void = () => {};
    const reading = cache.read('apiKey:a', () => new Promise<Loaded<string>>((resolve) => (release = resolve)));
    cache.suspend();
    cache.resume();
    release({ value: 'row', tags: ['key:1'] });
    await reading;
    expect(cache.size).toBe(0);
  });

  it('remembers no misses: a key or project created later is found at once', async () => {
    const cache = liveCache();
    let exists = false;
    const load = async () => (exists ? { value: 'project row', tags: ['project:1'] } : null);
    expect(await cache.read('project:new', load)).toBeNull();
    exists = true;
    expect(await cache.read('project:new', load)).toBe('project row');
  });

  it('lets the oldest entry go when full', async () => {
    const cache = liveCache({ maxEntries: 2 });
    const first = counting('first', ['key:1']);
    await cache.read('apiKey:1', first.load);
    await cache.read('apiKey:2', counting('second', ['key:2']).load);
    await cache.read('apiKey:3', counting('third', ['key:3']).load);
    expect(cache.size).toBe(2);
    await cache.read('apiKey:1', first.load);
    expect(first.loads()).toBe(2);
    // The evicted entry's tags went with it: a change to it touches nothing else.
    cache.invalidate('key:1');
    expect(cache.size).toBe(1);
  });

  it('holds answers until the last change this process made is confirmed', async () => {
    const cache = liveCache();
    expect(cache.held).toBeUndefined();
    let confirm: () => void = () => {};
    cache.holdAnswersUntil(new Promise<void>((resolve) => (confirm = resolve)));
    const held = cache.held;
    expect(held).toBeInstanceOf(Promise);
    confirm();
    await held;
    expect(cache.held).toBeUndefined();
  });
});
