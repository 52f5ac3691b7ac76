import { Migration } from '@mikro-orm/migrations';

export class Migration20261207124702 extends Migration {
  override name = 'Migration20261207124702';

  override up(): void | Promise<void> {
    this.addSql(`alter table "browser_sessions" add "record" boolean not null default false;`);

    this.addSql(`alter table "pipeline_runs" add "record" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "browser_sessions" drop column "record";`);

    this.addSql(`alter table "pipeline_runs" drop column "record";`);
  }
}
