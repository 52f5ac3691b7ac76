import { Migration } from '@mikro-orm/migrations';

export class Migration20261125083729 extends Migration {
  override name = 'Migration20261125083729';

  override up(): void | Promise<void> {
    this.addSql(`alter table "session_resources" add "external_cdp_url" varchar(1000) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "session_resources" drop column "external_cdp_url";`);
  }
}
