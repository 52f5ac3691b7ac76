import { Migration } from '@mikro-orm/migrations';

export class Migration20261124113654 extends Migration {
  override name = 'Migration20261124113654';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "analysis_jobs" ("id" uuid not null, "project_id" uuid not null, "pipeline_id" uuid not null, "version_id" uuid null, "session_id" uuid null, "model" varchar(64) not null, "prompt" text not null, "sealed_secrets" text null, "values" jsonb not null, "status" text not null default 'pending', "agent" text not null default 'running', "resources" jsonb not null, "messages" jsonb not null, "output" jsonb null, "error" jsonb null, "usage" jsonb not null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "analysis_jobs_project_id_index" on "analysis_jobs" ("project_id");`);
    this.addSql(`create index "analysis_jobs_pipeline_id_index" on "analysis_jobs" ("pipeline_id");`);

    this.addSql(
      `create table "generation_jobs" ("id" uuid not null, "project_id" uuid not null, "pipeline_id" uuid not null, "version_id" uuid null, "analysis_id" uuid null, "model" varchar(64) not null, "resource" uuid null, "status" text not null default 'pending', "agent" text not null default 'running', "messages" jsonb not null, "source" jsonb null, "errors" jsonb not null, "dry_run" jsonb null, "attempts" int not null default 0, "error" jsonb null, "usage" jsonb not null, "accepted_version_id" uuid null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "generation_jobs_project_id_index" on "generation_jobs" ("project_id");`);
    this.addSql(`create index "generation_jobs_pipeline_id_index" on "generation_jobs" ("pipeline_id");`);
    this.addSql(`create index "generation_jobs_analysis_id_index" on "generation_jobs" ("analysis_id");`);

    this.addSql(`alter table "pipeline_runs" add "generation_id" uuid null;`);
    this.addSql(
      `alter table "pipeline_runs" add constraint "pipeline_runs_generation_id_foreign" foreign key ("generation_id") references "generation_jobs" ("id") on delete cascade;`,
    );
    this.addSql(`create index "pipeline_runs_generation_id_index" on "pipeline_runs" ("generation_id");`);

    this.addSql(
      `alter table "analysis_jobs" add constraint "analysis_jobs_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "analysis_jobs" add constraint "analysis_jobs_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "analysis_jobs" add constraint "analysis_jobs_version_id_foreign" foreign key ("version_id") references "pipeline_versions" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "analysis_jobs" add constraint "analysis_jobs_session_id_foreign" foreign key ("session_id") references "browser_sessions" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "analysis_jobs" add constraint "analysis_jobs_status_check" check ("status" in ('pending', 'accepted', 'rejected'));`,
    );
    this.addSql(`alter table "analysis_jobs" add constraint "analysis_jobs_agent_check" check ("agent" in ('running', 'stopped'));`);

    this.addSql(
      `alter table "generation_jobs" add constraint "generation_jobs_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "generation_jobs" add constraint "generation_jobs_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "generation_jobs" add constraint "generation_jobs_version_id_foreign" foreign key ("version_id") references "pipeline_versions" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "generation_jobs" add constraint "generation_jobs_analysis_id_foreign" foreign key ("analysis_id") references "analysis_jobs" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "generation_jobs" add constraint "generation_jobs_accepted_version_id_foreign" foreign key ("accepted_version_id") references "pipeline_versions" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "generation_jobs" add constraint "generation_jobs_status_check" check ("status" in ('pending', 'accepted', 'rejected'));`,
    );
    this.addSql(`alter table "generation_jobs" add constraint "generation_jobs_agent_check" check ("agent" in ('running', 'stopped'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "generation_jobs" drop constraint "generation_jobs_analysis_id_foreign";`);
    this.addSql(`alter table "pipeline_runs" drop constraint "pipeline_runs_generation_id_foreign";`);

    this.addSql(`drop table if exists "analysis_jobs" cascade;`);
    this.addSql(`drop table if exists "generation_jobs" cascade;`);

    this.addSql(`drop index "pipeline_runs_generation_id_index";`);
    this.addSql(`alter table "pipeline_runs" drop column "generation_id";`);
  }
}
