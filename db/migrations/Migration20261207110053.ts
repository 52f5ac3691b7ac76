import { Migration } from '@mikro-orm/migrations';

/**
 * Why a resource was stopped, as a fact code acts on (`SessionResource.stopCause`): a host shut down
 * marks the browsers it stops `host_shutdown`, so a run that comes to it again fails `host_shutdown`.
 */
export class Migration20261207110053 extends Migration {
  override name = 'Migration20261207110053';

  override up(): void | Promise<void> {
    this.addSql(`alter table "session_resources" add "stop_cause" text null;`);
    this.addSql(
      `alter table "session_resources" add constraint "session_resources_stop_cause_check" check ("stop_cause" in ('host_shutdown'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "session_resources" drop constraint "session_resources_stop_cause_check";`);
    this.addSql(`alter table "session_resources" drop column "stop_cause";`);
  }
}
