import { Migration } from '@mikro-orm/migrations';

export class Migration20261207213054 extends Migration {
  override name = 'Migration20261207213054';

  override up(): void | Promise<void> {
    this.addSql(`create index "pipeline_runs_project_id_created_index" on "pipeline_runs" ("project_id", "created");`);

    this.addSql(`create index "usage_records_project_id_created_index" on "usage_records" ("project_id", "created");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "pipeline_runs_project_id_created_index";`);

    this.addSql(`drop index "usage_records_project_id_created_index";`);
  }
}
