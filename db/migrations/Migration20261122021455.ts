import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021455 extends Migration {
  override name = 'Migration20261122021455';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "external_registrations" ("id" uuid not null, "token_hash" varchar(64) not null, "provider" varchar(64) not null, "subject" varchar(255) not null, "email" varchar(320) null, "email_verified" boolean not null, "first_name" varchar(100) null, "last_name" varchar(100) null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "external_registrations" add constraint "external_registrations_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "rate_limit_buckets" ("key" varchar(200) not null, "hits" int not null, "reset_at" timestamptz not null, primary key ("key"));`,
    );
    this.addSql(`create index "rate_limit_buckets_reset_at_index" on "rate_limit_buckets" ("reset_at");`);

    this.addSql(
      `create table "recovery_codes" ("id" uuid not null, "user_id" uuid not null, "code_hash" varchar(64) not null, "used_at" timestamptz null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "recovery_codes_user_id_index" on "recovery_codes" ("user_id");`);

    this.addSql(
      `alter table "users" add "totp_secret" varchar(64) null, add "two_factor_enabled" boolean not null default false, add "totp_last_step" int null;`,
    );

    this.addSql(
      `alter table "external_identities" add constraint "external_identities_user_id_provider_unique" unique ("user_id", "provider");`,
    );

    this.addSql(
      `alter table "recovery_codes" add constraint "recovery_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "external_registrations" cascade;`);
    this.addSql(`drop table if exists "rate_limit_buckets" cascade;`);
    this.addSql(`drop table if exists "recovery_codes" cascade;`);

    this.addSql(`alter table "external_identities" drop constraint "external_identities_user_id_provider_unique";`);

    this.addSql(`alter table "users" drop column "totp_secret", drop column "two_factor_enabled", drop column "totp_last_step";`);
  }
}
