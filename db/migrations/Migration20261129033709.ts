import { Migration } from '@mikro-orm/migrations';

/** Usage records outlive their project (set null): the account's usage history keeps what it paid for. */
export class Migration20261129033709 extends Migration {
  override name = 'Migration20261129033709';

  override up(): void | Promise<void> {
    this.addSql(`alter table "usage_records" drop constraint "usage_records_project_id_foreign";`);

    this.addSql(`alter table "usage_records" alter column "project_id" drop not null;`);
    this.addSql(
      `alter table "usage_records" add constraint "usage_records_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete set null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "usage_records" drop constraint "usage_records_project_id_foreign";`);
    this.addSql(`delete from "usage_records" where "project_id" is null;`);

    this.addSql(`alter table "usage_records" alter column "project_id" set not null;`);
    this.addSql(
      `alter table "usage_records" add constraint "usage_records_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
  }
}
