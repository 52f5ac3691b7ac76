import { Migration } from '@mikro-orm/migrations';

export class Migration20261207124859 extends Migration {
  override name = 'Migration20261207124859';

  override up(): void | Promise<void> {
    this.addSql(`alter table "browser_hosts" add "warm_pool" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "browser_hosts" drop column "warm_pool";`);
  }
}
