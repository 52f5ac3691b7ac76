import { Migration } from '@mikro-orm/migrations';

export class Migration20261122194341 extends Migration {
  override name = 'Migration20261122194341';

  override up(): void | Promise<void> {
    // Offers are only valid while the host that wrote them runs, and a host deletes its own when
    // it starts: the ones present now (without a signature) are void once hosts restart on this
    // version. Dropping them lets the column be required without a made-up value.
    this.addSql(`delete from "warm_browsers";`);
    this.addSql(`alter table "warm_browsers" add "launch_signature" varchar(64) not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "warm_browsers" drop column "launch_signature";`);
  }
}
