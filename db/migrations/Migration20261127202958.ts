import { Migration } from '@mikro-orm/migrations';

/**
 * A generation's candidate keeps its compiled plan, so the dry run and the accept read it instead
 * of compiling the source again. Jobs from before have none: they are compiled when read.
 */
export class Migration20261127202958 extends Migration {
  override name = 'Migration20261127202958';

  override up(): void | Promise<void> {
    this.addSql(`alter table "generation_jobs" add "plan" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "generation_jobs" drop column "plan";`);
  }
}
