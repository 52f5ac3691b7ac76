import { Migration } from '@mikro-orm/migrations';

export class Migration20261207125548 extends Migration {
  override name = 'Migration20261207125548';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "browser_sessions" add "fingerprint" varchar(20) not null default 'desktop', add "locale" varchar(35) not null default 'en-US', add "timezone" varchar(64) not null default 'UTC', add "fingerprint_data" jsonb null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(
      `alter table "browser_sessions" drop column "fingerprint", drop column "locale", drop column "timezone", drop column "fingerprint_data";`,
    );
  }
}
