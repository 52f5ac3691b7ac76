import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Runs `work` against a fresh, empty database created next to `baseUrl` (default: the local
 * PostgreSQL as the current user) and drops it afterwards. Used by scripts and tests.
 */
export async function withScratchDatabase<T>(
  baseUrl: string | undefined,
  work: (url: string) => Promise<T>,
  prefix = 'scratch',
): Promise<T> {
  const { url, drop } = await createScratchDatabase(baseUrl, prefix);
  try {
    return await work(url);
  } finally {
    await drop();
  }
}

export async function createScratchDatabase(baseUrl = 'postgres://root@127.0.0.1:5432/postgres', prefix = 'scratch') {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new URL(baseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}
