import { Migration } from '@mikro-orm/migrations';

/** Screenshots of runs and of analysis proposals (RunScreenshot), and the runs' `screenshots` option. */
export class Migration20261128185717 extends Migration {
  override name = 'Migration20261128185717';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "run_screenshots" ("id" uuid not null, "project_id" uuid not null, "run_id" uuid null, "analysis_id" uuid null, "node" varchar(500) not null, "kind" text not null, "url" text not null, "width" int not null, "height" int not null, "bytes" int not null, "boxes" jsonb null, "image" bytea not null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "run_screenshots_analysis_id_index" on "run_screenshots" ("analysis_id");`);
    this.addSql(`create index "run_screenshots_run_id_created_index" on "run_screenshots" ("run_id", "created");`);
    this.addSql(`create index "run_screenshots_created_index" on "run_screenshots" ("created");`);

    this.addSql(`alter table "pipeline_runs" add "screenshots" text not null default 'failures';`);
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_screenshots_check" check ("screenshots" in ('none', 'failures', 'steps'));`,
    );

    this.addSql(
      `alter table "run_screenshots" add constraint "run_screenshots_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "run_screenshots" add constraint "run_screenshots_run_id_foreign" foreign key ("run_id") references "pipeline_runs" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "run_screenshots" add constraint "run_screenshots_analysis_id_foreign" foreign key ("analysis_id") references "analysis_jobs" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "run_screenshots" add constraint "run_screenshots_kind_check" check ("kind" in ('step', 'failure', 'proposal'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "run_screenshots" cascade;`);

    this.addSql(`alter table "pipeline_runs" drop constraint "pipeline_runs_screenshots_check";`);
    this.addSql(`alter table "pipeline_runs" drop column "screenshots";`);
  }
}
