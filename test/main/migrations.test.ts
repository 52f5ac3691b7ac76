import { type MikroORM, ReferenceKind } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initORM, migrate } from '../../db/orm.ts';
import { createScratchDatabase } from '../../scripts/scratch-database.ts';
import { testDatabaseBase } from '../support/stack.ts';

/**
 * The committed migrations build exactly the schema the entities describe: an entity change
 * without its migration (`npm run db:migration:create`) fails here, not in production.
 */

let database: Awaited<ReturnType<typeof createScratchDatabase>>;
let orm: MikroORM;

beforeAll(async () => {
  database = await createScratchDatabase(testDatabaseBase, 'bfmigrations');
  orm = await initORM(database.url);
  await migrate(orm);
});
afterAll(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe('the committed migrations', () => {
  it('leave nothing for the schema generator to change on a fresh database', async () => {
    const sql = await orm.schema.getUpdateSchemaSQL({ wrap: false });
    expect(sql.trim(), 'SQL the entities still need: an entity changed without a migration').toBe('');
  });

  it('and their snapshot matches the entities, so the next migration holds only the next change', async () => {
    // The snapshot is what `db:migration:create` diffs against; a stale one writes wrong migrations.
    expect(await orm.migrator.checkSchema()).toBe(false);
  });

  it('catch an entity that gains a column without a migration', async () => {
    // The same entities, but Project with one more property, as if one were added to its class.
    const drifted = await initORM(database.url, {
      discovery: {
        onMetadata: (meta) => {
          if (meta.className === 'Project')
            meta.addProperty({ name: 'driftProbe', type: 'string', kind: ReferenceKind.SCALAR, nullable: true });
        },
      },
    });
    try {
      expect(await drifted.schema.getUpdateSchemaSQL({ wrap: false })).toMatch(/alter table "projects" add "drift_probe"/);
      expect(await drifted.migrator.checkSchema()).toBe(true);
    } finally {
      await drifted.close(true);
    }
  });
});
