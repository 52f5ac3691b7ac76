import { Migration } from '@mikro-orm/migrations';

export class Migration20261122033334 extends Migration {
  override name = 'Migration20261122033334';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "warm_browsers" ("id" uuid not null, "host_id" varchar(100) not null, "cdp_endpoint" varchar(500) not null, "pid" int null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "warm_browsers_host_id_index" on "warm_browsers" ("host_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "warm_browsers" cascade;`);
  }
}
