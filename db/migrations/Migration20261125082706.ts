import { Migration } from '@mikro-orm/migrations';

export class Migration20261125082706 extends Migration {
  override name = 'Migration20261125082706';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "stripe_events" ("id" varchar(255) not null, "type" varchar(100) not null, "event_created" bigint not null, "outcome" varchar(300) not null, "received_at" timestamptz not null, primary key ("id"));`,
    );

    this.addSql(
      `create table "billing_accounts" ("id" uuid not null, "user_id" uuid not null, "currency" varchar(3) not null, "stripe_customer_id" varchar(255) null, "available" bigint not null default '0', "pending" bigint not null default '0', "carry_micros" bigint not null default '0', "exhausted_at" timestamptz null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "billing_accounts" add constraint "billing_accounts_user_id_unique" unique ("user_id");`);
    this.addSql(
      `alter table "billing_accounts" add constraint "billing_accounts_stripe_customer_id_unique" unique ("stripe_customer_id");`,
    );

    this.addSql(
      `create table "subscriptions" ("id" uuid not null, "account_id" uuid not null, "stripe_subscription_id" varchar(255) not null, "plan_id" varchar(100) null, "price_id" varchar(255) null, "status" varchar(40) not null, "deleted" boolean not null default false, "state_created" bigint not null, "activated_by" varchar(255) null, "current_period_start" bigint null, "current_period_end" bigint null, "pool_period" bigint null, "left_cpu" bigint not null default '0', "left_network" bigint not null default '0', "left_tokens" bigint not null default '0', "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "subscriptions_account_id_index" on "subscriptions" ("account_id");`);
    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_stripe_subscription_id_unique" unique ("stripe_subscription_id");`,
    );

    this.addSql(
      `create table "ledger_entries" ("id" uuid not null, "account_id" uuid not null, "kind" text not null, "currency" varchar(3) not null, "amount" bigint not null, "pending_change" bigint not null default '0', "checkout_session_id" varchar(255) null, "usage_record_id" uuid null, "stripe_event_id" varchar(255) null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "ledger_entries_account_id_index" on "ledger_entries" ("account_id");`);
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_checkout_session_id_unique" unique ("checkout_session_id");`);
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_usage_record_id_unique" unique ("usage_record_id");`);

    this.addSql(
      `alter table "usage_records" add "account_id" uuid null, add "report_id" varchar(200) null, add "currency" varchar(3) null, add "from_pool" numeric(20,6) not null default '0', add "discount_micros" bigint not null default '0', add "cost_micros" bigint not null default '0', add "billed" bigint not null default '0', add "pending" bigint not null default '0';`,
    );
    this.addSql(
      `alter table "usage_records" add constraint "usage_records_account_id_foreign" foreign key ("account_id") references "billing_accounts" ("id") on delete cascade;`,
    );
    this.addSql(`create index "usage_records_account_id_index" on "usage_records" ("account_id");`);
    this.addSql(`alter table "usage_records" add constraint "usage_records_report_id_unique" unique ("report_id");`);

    this.addSql(
      `alter table "billing_accounts" add constraint "billing_accounts_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_account_id_foreign" foreign key ("account_id") references "billing_accounts" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_account_id_foreign" foreign key ("account_id") references "billing_accounts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_usage_record_id_foreign" foreign key ("usage_record_id") references "usage_records" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_kind_check" check ("kind" in ('top_up', 'usage', 'settlement'));`,
    );

    // The units are named as the coordinator reports them.
    this.addSql(`update "usage_records" set "unit" = 'cpu' where "unit" = 'cpu_seconds';`);
    this.addSql(`update "usage_records" set "unit" = 'network' where "unit" = 'network_bytes';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "usage_records" drop constraint "usage_records_account_id_foreign";`);
    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_account_id_foreign";`);
    this.addSql(`alter table "ledger_entries" drop constraint "ledger_entries_account_id_foreign";`);

    this.addSql(`drop table if exists "stripe_events" cascade;`);
    this.addSql(`drop table if exists "billing_accounts" cascade;`);
    this.addSql(`drop table if exists "subscriptions" cascade;`);
    this.addSql(`drop table if exists "ledger_entries" cascade;`);

    this.addSql(`drop index "usage_records_account_id_index";`);
    this.addSql(`alter table "usage_records" drop constraint "usage_records_report_id_unique";`);
    this.addSql(
      `alter table "usage_records" drop column "account_id", drop column "report_id", drop column "currency", drop column "from_pool", drop column "discount_micros", drop column "cost_micros", drop column "billed", drop column "pending";`,
    );
  }
}
