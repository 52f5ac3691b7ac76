import path from 'node:path';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, MikroORM, type Options } from '@mikro-orm/postgresql';
import { entities } from './entities/index.ts';

export const migrationsPath = path.join(import.meta.dirname, 'migrations');

export function ormConfig(databaseUrl: string, overrides: Partial<Options> = {}) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    migrations: {
      path: migrationsPath,
      glob: 'Migration*.ts',
      emit: 'ts',
      // Production processes must not write files; the snapshot is made by migration:create.
      snapshotOnMigrate: false,
      silent: true,
      snapshotName: '.snapshot',
    },
    // The access-change triggers (Migration20261125112629) are written by hand, on a pivot table
    // too, which no entity can declare: the schema diff leaves existing triggers alone.
    schemaGenerator: { ignoreTriggers: true },
    pool: { min: 0, max: 10 },
    // A database that goes away mid-query must not hold a pooled connection for ever: a connect
    // gives up after 10 s, a query after 2 minutes, and dead peers are found by TCP keep-alive.
    driverOptions: { connectionTimeoutMillis: 10_000, query_timeout: 120_000, keepAlive: true },
    // Every request and activity forks its own EntityManager; the global one is never used.
    allowGlobalContext: false,
    ...overrides,
  });
}

export async function initORM(databaseUrl: string, overrides: Partial<Options> = {}) {
  return MikroORM.init(ormConfig(databaseUrl, overrides));
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(orm: MikroORM) {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}
