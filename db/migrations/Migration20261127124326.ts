import { Migration } from '@mikro-orm/migrations';

/**
 * The host registry: the launch signatures a host keeps warm, and whether it is draining (asked to
 * stop: it takes no new browsers). Rows written before this have no warm signatures; the default
 * fills them and is dropped, as every host writes the column on its heartbeat.
 */
export class Migration20261127124326 extends Migration {
  override name = 'Migration20261127124326';

  override up(): void | Promise<void> {
    this.addSql(`alter table "browser_hosts" add "warm_signatures" jsonb not null default '[]', add "draining_since" timestamptz null;`);
    this.addSql(`alter table "browser_hosts" alter column "warm_signatures" drop default;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "browser_hosts" drop column "warm_signatures", drop column "draining_since";`);
  }
}
