import { Migration } from '@mikro-orm/migrations';

export class Migration20261122023541 extends Migration {
  override name = 'Migration20261122023541';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "pipelines" ("id" uuid not null, "project_id" uuid not null, "name" varchar(200) not null, "description" text not null default '', "current_version_id" uuid null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "pipelines_project_id_index" on "pipelines" ("project_id");`);

    this.addSql(
      `create table "pipeline_versions" ("id" uuid not null, "pipeline_id" uuid not null, "project_id" uuid not null, "source" jsonb not null, "errors" jsonb not null, "plan" jsonb null, "metadata" jsonb not null, "predecessor_id" uuid null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "pipeline_versions_pipeline_id_index" on "pipeline_versions" ("pipeline_id");`);
    this.addSql(`create index "pipeline_versions_project_id_index" on "pipeline_versions" ("project_id");`);
    this.addSql(`create index "pipeline_versions_predecessor_id_index" on "pipeline_versions" ("predecessor_id");`);

    this.addSql(
      `create table "pipeline_runs" ("id" uuid not null, "project_id" uuid not null, "pipeline_id" uuid not null, "version_id" uuid not null, "session_id" uuid null, "resource_id" uuid null, "owns_resource" boolean not null default false, "status" text not null default 'queued', "evaluation" text not null default 'pending', "args" jsonb not null, "node_outputs" jsonb not null, "result" jsonb null, "error" jsonb null, "started_at" timestamptz null, "finished_at" timestamptz null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "pipeline_runs_project_id_index" on "pipeline_runs" ("project_id");`);
    this.addSql(`create index "pipeline_runs_pipeline_id_index" on "pipeline_runs" ("pipeline_id");`);
    this.addSql(`create index "pipeline_runs_version_id_index" on "pipeline_runs" ("version_id");`);

    this.addSql(
      `alter table "pipelines" add constraint "pipelines_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipelines" add constraint "pipelines_current_version_id_foreign" foreign key ("current_version_id") references "pipeline_versions" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "pipeline_versions" add constraint "pipeline_versions_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_versions" add constraint "pipeline_versions_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_versions" add constraint "pipeline_versions_predecessor_id_foreign" foreign key ("predecessor_id") references "pipeline_versions" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_version_id_foreign" foreign key ("version_id") references "pipeline_versions" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_session_id_foreign" foreign key ("session_id") references "browser_sessions" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_resource_id_foreign" foreign key ("resource_id") references "session_resources" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_status_check" check ("status" in ('queued', 'running', 'succeeded', 'failed', 'cancelled'));`,
    );
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_evaluation_check" check ("evaluation" in ('pending', 'running', 'completed', 'failed', 'stopped'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "pipeline_versions" drop constraint "pipeline_versions_pipeline_id_foreign";`);
    this.addSql(`alter table "pipeline_runs" drop constraint "pipeline_runs_pipeline_id_foreign";`);
    this.addSql(`alter table "pipelines" drop constraint "pipelines_current_version_id_foreign";`);
    this.addSql(`alter table "pipeline_versions" drop constraint "pipeline_versions_predecessor_id_foreign";`);
    this.addSql(`alter table "pipeline_runs" drop constraint "pipeline_runs_version_id_foreign";`);

    this.addSql(`drop table if exists "pipelines" cascade;`);
    this.addSql(`drop table if exists "pipeline_versions" cascade;`);
    this.addSql(`drop table if exists "pipeline_runs" cascade;`);
  }
}
