import { Migration } from '@mikro-orm/migrations';

export class Migration20261207124737 extends Migration {
  override name = 'Migration20261207124737';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "browser_downloads" ("id" uuid not null, "project_id" uuid not null, "session_id" uuid not null, "resource_id" uuid not null, "run_id" uuid null, "name" varchar(500) not null, "bytes" bigint not null, "mime_type" varchar(200) not null, "url" text not null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "browser_downloads_project_id_index" on "browser_downloads" ("project_id");`);
    this.addSql(`create index "browser_downloads_session_id_index" on "browser_downloads" ("session_id");`);
    this.addSql(`create index "browser_downloads_run_id_index" on "browser_downloads" ("run_id");`);
    this.addSql(`create index "browser_downloads_resource_id_created_index" on "browser_downloads" ("resource_id", "created");`);
    this.addSql(`create index "browser_downloads_created_index" on "browser_downloads" ("created");`);

    this.addSql(
      `alter table "browser_downloads" add constraint "browser_downloads_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "browser_downloads" add constraint "browser_downloads_session_id_foreign" foreign key ("session_id") references "browser_sessions" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "browser_downloads" add constraint "browser_downloads_resource_id_foreign" foreign key ("resource_id") references "session_resources" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "browser_downloads" add constraint "browser_downloads_run_id_foreign" foreign key ("run_id") references "pipeline_runs" ("id") on delete set null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "browser_downloads" cascade;`);
  }
}
