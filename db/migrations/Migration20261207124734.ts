import { Migration } from '@mikro-orm/migrations';

export class Migration20261207124734 extends Migration {
  override name = 'Migration20261207124734';

  override up(): void | Promise<void> {
    this.addSql(`alter table "browser_sessions" add "persist" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "browser_sessions" drop column "persist";`);
  }
}
