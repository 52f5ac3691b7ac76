/**
 * `npm run db:migration:create`: diffs the entities against the committed snapshot and writes
 * a new migration (and the snapshot) under db/migrations. Needs a database with every migration
 * applied; it uses a throw-away one on the machine's PostgreSQL unless DATABASE_URL is set.
 */
import { initORM, migrate } from '../db/orm.ts';
import { withScratchDatabase } from './scratch-database.ts';

await withScratchDatabase(process.env.DATABASE_URL, async (url) => {
  const orm = await initORM(url);
  try {
    await migrate(orm);
    const result = await orm.migrator.create();
    console.log(result.fileName ? `wrote ${result.fileName}` : 'no changes: entities match the last migration');
  } finally {
    await orm.close(true);
  }
});
