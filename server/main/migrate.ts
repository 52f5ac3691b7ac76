/** `npm run db:migrate`: applies pending migrations to DATABASE_URL, then exits. */
import { initORM, migrate } from '../../db/orm.ts';
import { loadConfigOrExit } from './loadConfig.ts';

const config = loadConfigOrExit();
if (!config.databaseUrl) {
  console.error('DATABASE_URL is not set. (`npm start` migrates its embedded database by itself.)');
  process.exit(1);
}
// No statement bound: a migration may run long.
const orm = await initORM(config.databaseUrl, {}, null);
try {
  const applied = await migrate(orm);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply: the schema is up to date');
} finally {
  await orm.close(true);
}
