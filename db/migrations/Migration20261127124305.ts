import { Migration } from '@mikro-orm/migrations';

/**
 * Each browser host records the port its relay is bound to (BROWSER_RELAY_PORT, or the free port
 * it took): the api dials `<address>:<relay_port>` instead of Chromium's DevTools port.
 */
export class Migration20261127124305 extends Migration {
  override name = 'Migration20261127124305';

  override up(): void | Promise<void> {
    this.addSql(`alter table "browser_hosts" add "relay_port" int null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "browser_hosts" drop column "relay_port";`);
  }
}
