import { Migration } from '@mikro-orm/migrations';

export class Migration20261207124237 extends Migration {
  override name = 'Migration20261207124237';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "blobs" ("key" varchar(500) not null, "bytes" bigint not null, "data" bytea not null, "created" timestamptz not null, primary key ("key"));`,
    );
    this.addSql(`create index "blobs_created_index" on "blobs" ("created");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "blobs" cascade;`);
  }
}
