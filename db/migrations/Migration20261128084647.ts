import { Migration } from '@mikro-orm/migrations';

/** Webhooks (docs/webhooks.md): a project's endpoints, and each event's delivery with its tries. */
export class Migration20261128084647 extends Migration {
  override name = 'Migration20261128084647';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhook_endpoints" ("id" uuid not null, "project_id" uuid not null, "url" text not null, "description" varchar(500) null, "events" jsonb not null, "secret" text not null, "enabled" boolean not null default true, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_endpoints_project_id_index" on "webhook_endpoints" ("project_id");`);

    this.addSql(
      `create table "webhook_deliveries" ("id" uuid not null, "project_id" uuid not null, "endpoint_id" uuid not null, "message_id" varchar(100) not null, "event_key" varchar(200) null, "event" varchar(50) not null, "payload" jsonb not null, "status" text not null default 'pending', "attempts" jsonb not null, "next_attempt_at" timestamptz null, "failure" varchar(500) null, "resent_from" uuid null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_deliveries_project_id_index" on "webhook_deliveries" ("project_id");`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_index" on "webhook_deliveries" ("endpoint_id");`);
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_event_key_unique" unique ("endpoint_id", "event_key");`,
    );

    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_status_check" check ("status" in ('pending', 'succeeded', 'failed'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_endpoint_id_foreign";`);

    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
  }
}
