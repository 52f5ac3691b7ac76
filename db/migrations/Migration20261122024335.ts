import { Migration } from '@mikro-orm/migrations';

export class Migration20261122024335 extends Migration {
  override name = 'Migration20261122024335';

  override up(): void | Promise<void> {
    this.addSql(`alter table "pipeline_runs" add "sealed_secrets" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "pipeline_runs" drop column "sealed_secrets";`);
  }
}
