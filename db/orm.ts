import path from 'node:path';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, MikroORM, type Options } from '@mikro-orm/postgresql';
import { driverBounds } from './driverBounds.ts';
import { entities } from './entities/index.ts';

export const migrationsPath = path.join(import.meta.dirname, 'migrations');

/** DATABASE_TIMEOUT_SECONDS' default (server/config.ts), for callers without a config. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 3_000;

export function ormConfig(databaseUrl: string, overrides: Partial<Options> = {}, timeoutMs: number | null = DEFAULT_DATABASE_TIMEOUT_MS) {
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
    driverOptions: driverBounds(timeoutMs),
    // Every request and activity forks its own EntityManager; the global one is never used.
    allowGlobalContext: false,
    ...overrides,
  });
}

export async function initORM(
  databaseUrl: string,
  overrides: Partial<Options> = {},
  timeoutMs: number | null = DEFAULT_DATABASE_TIMEOUT_MS,
) {
  return MikroORM.init(ormConfig(databaseUrl, overrides, timeoutMs));
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(orm: MikroORM) {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}
