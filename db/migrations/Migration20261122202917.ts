import { Migration } from '@mikro-orm/migrations';

export class Migration20261122202917 extends Migration {
  override name = 'Migration20261122202917';

  override up(): void | Promise<void> {
    // Proxy passwords are stored sealed now, longer than the clear 1000 characters allowed.
    this.addSql(`alter table "proxies" alter column "password" type text using ("password"::text);`);
  }

  override down(): void | Promise<void> {
    // Sealed passwords may not fit the old varchar(1000), and cannot be opened here (no service
    // secret): the column stays text. Passwords kept in clear are read as they are either way.
  }
}
