import { Migration } from '@mikro-orm/migrations';

export class Migration20261122051441 extends Migration {
  override name = 'Migration20261122051441';

  override up(): void | Promise<void> {
    this.addSql(`alter table "users" alter column "totp_secret" type text using ("totp_secret"::text);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "users" alter column "totp_secret" type varchar(64) using ("totp_secret"::varchar(64));`);
  }
}
