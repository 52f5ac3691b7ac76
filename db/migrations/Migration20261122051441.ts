import { Migration } from '@mikro-orm/migrations';

export class Migration20261122051441 extends Migration {
  override name = 'Migration20261122051441';

  override up(): void | Promise<void> {
    this.addSql(`alter table "users" alter column "totp_secret" type text using ("totp_secret"::text);`);
  }

  override down(): void | Promise<void> {
    // Sealed secrets do not fit the old varchar(64), and cannot be opened here (no service secret):
    // the column stays text. Secrets kept in clear still work after up() (sealed on first use).
  }
}
