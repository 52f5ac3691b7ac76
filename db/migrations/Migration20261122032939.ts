import { Migration } from '@mikro-orm/migrations';

export class Migration20261122032939 extends Migration {
  override name = 'Migration20261122032939';

  override up(): void | Promise<void> {
    this.addSql(`alter table "pipeline_runs" add "function_version_id" uuid null;`);
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_function_version_id_foreign" foreign key ("function_version_id") references "function_versions" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "pipeline_runs" alter column "pipeline_id" drop not null;`);
    this.addSql(`alter table "pipeline_runs" alter column "version_id" drop not null;`);
    this.addSql(`create index "pipeline_runs_function_version_id_index" on "pipeline_runs" ("function_version_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "pipeline_runs" drop constraint "pipeline_runs_function_version_id_foreign";`);

    this.addSql(`drop index "pipeline_runs_function_version_id_index";`);
    this.addSql(`alter table "pipeline_runs" drop column "function_version_id";`);
    this.addSql(`alter table "pipeline_runs" alter column "pipeline_id" set not null;`);
    this.addSql(`alter table "pipeline_runs" alter column "version_id" set not null;`);
  }
}
