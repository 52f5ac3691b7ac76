import { Migration } from '@mikro-orm/migrations';

/** Webhook deliveries: indexes for housekeeping's look for unstarted ones and its deletion of old ones. */
export class Migration20261128093753 extends Migration {
  override name = 'Migration20261128093753';

  override up(): void | Promise<void> {
    this.addSql(`create index "webhook_deliveries_status_created_index" on "webhook_deliveries" ("status", "created");`);
    this.addSql(`create index "webhook_deliveries_created_index" on "webhook_deliveries" ("created");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "webhook_deliveries_status_created_index";`);
    this.addSql(`drop index "webhook_deliveries_created_index";`);
  }
}
