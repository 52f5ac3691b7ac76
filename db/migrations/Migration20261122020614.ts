import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020614 extends Migration {
  override name = 'Migration20261122020614';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "browser_hosts" ("id" varchar(100) not null, "address" varchar(255) not null, "capacity" int not null, "running" int not null default 0, "heartbeat_at" timestamptz not null, "created" timestamptz not null, primary key ("id"));`,
    );

    this.addSql(`create table "log_streams" ("stream" varchar(120) not null, "last_seq" int not null default 0, primary key ("stream"));`);

    this.addSql(
      `create table "usage_records" ("id" uuid not null, "project_id" uuid not null, "resource_id" uuid not null, "unit" varchar(40) not null, "amount" numeric(20,6) not null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "usage_records_project_id_index" on "usage_records" ("project_id");`);
    this.addSql(`create index "usage_records_resource_id_index" on "usage_records" ("resource_id");`);

    this.addSql(
      `create table "proxies" ("id" uuid not null, "project_id" uuid not null, "name" varchar(200) null, "hostname" varchar(255) not null, "port" int not null, "protocol" varchar(20) not null, "username" varchar(255) null, "password" varchar(1000) null, "metadata" jsonb not null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "proxies_project_id_index" on "proxies" ("project_id");`);

    this.addSql(
      `create table "log_entries" ("id" bigserial primary key, "project_id" uuid not null, "stream" varchar(120) not null, "seq" int not null, "context" varchar(200) not null, "severity" text not null, "message" text not null, "area" varchar(60) not null, "object" jsonb null, "created" timestamptz not null);`,
    );
    this.addSql(`create index "log_entries_project_id_index" on "log_entries" ("project_id");`);
    this.addSql(`alter table "log_entries" add constraint "log_entries_stream_seq_unique" unique ("stream", "seq");`);

    this.addSql(
      `create table "browser_sessions" ("id" uuid not null, "project_id" uuid not null, "name" varchar(200) not null, "description" text not null default '', "image" varchar(100) not null, "args" text not null default '', "screen" jsonb not null, "cookies" jsonb not null default '[]', "proxy" jsonb null, "stored_proxy_id" uuid null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "browser_sessions_project_id_index" on "browser_sessions" ("project_id");`);

    this.addSql(
      `create table "session_resources" ("id" uuid not null, "session_id" uuid not null, "project_id" uuid not null, "status" text not null default 'starting', "host_id" varchar(100) null, "cdp_endpoint" varchar(500) null, "pid" int null, "warm" boolean not null default false, "started_at" timestamptz null, "stopped_at" timestamptz null, "stop_reason" varchar(300) null, "usage" jsonb null, "last_activity" timestamptz null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "session_resources_session_id_index" on "session_resources" ("session_id");`);
    this.addSql(`create index "session_resources_project_id_index" on "session_resources" ("project_id");`);

    this.addSql(
      `alter table "usage_records" add constraint "usage_records_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "proxies" add constraint "proxies_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "log_entries" add constraint "log_entries_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "log_entries" add constraint "log_entries_severity_check" check ("severity" in ('debug', 'info', 'warn', 'error'));`,
    );

    this.addSql(
      `alter table "browser_sessions" add constraint "browser_sessions_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "browser_sessions" add constraint "browser_sessions_stored_proxy_id_foreign" foreign key ("stored_proxy_id") references "proxies" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "session_resources" add constraint "session_resources_session_id_foreign" foreign key ("session_id") references "browser_sessions" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "session_resources" add constraint "session_resources_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "session_resources" add constraint "session_resources_status_check" check ("status" in ('starting', 'running', 'stopping', 'stopped', 'failed'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "browser_sessions" drop constraint "browser_sessions_stored_proxy_id_foreign";`);
    this.addSql(`alter table "session_resources" drop constraint "session_resources_session_id_foreign";`);

    this.addSql(`drop table if exists "browser_hosts" cascade;`);
    this.addSql(`drop table if exists "log_streams" cascade;`);
    this.addSql(`drop table if exists "usage_records" cascade;`);
    this.addSql(`drop table if exists "proxies" cascade;`);
    this.addSql(`drop table if exists "log_entries" cascade;`);
    this.addSql(`drop table if exists "browser_sessions" cascade;`);
    this.addSql(`drop table if exists "session_resources" cascade;`);
  }
}
