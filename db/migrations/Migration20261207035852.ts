import { Migration } from '@mikro-orm/migrations';

/**
 * Deliveries in flight per project (server/webhooks/inFlight.ts): a delivery's place is marked by
 * `dispatched_at`. Those already pending had their workflow: they are in flight since they were made.
 * One whose workflow has ended without settling it is failed by housekeeping, which frees its place
 * (settleAbandonedDeliveries, server/webhooks/events.ts); one never tried gets its workflow again.
 */
export class Migration20261207035852 extends Migration {
  override name = 'Migration20261207035852';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add "dispatched_at" timestamptz null;`);
    this.addSql(`update "webhook_deliveries" set "dispatched_at" = "created" where "status" = 'pending';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop column "dispatched_at";`);
  }
}
