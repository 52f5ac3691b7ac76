import { Migration } from '@mikro-orm/migrations';

export class Migration20261125105803 extends Migration {
  override name = 'Migration20261125105803';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "external_link_requests" ("id" uuid not null, "token_hash" varchar(64) not null, "user_id" uuid not null, "session_id" uuid not null, "provider" varchar(64) not null, "subject" varchar(255) not null, "email" varchar(320) null, "email_verified" boolean not null, "first_name" varchar(100) null, "last_name" varchar(100) null, "return_to" text not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "external_link_requests" add constraint "external_link_requests_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "external_link_requests_user_id_index" on "external_link_requests" ("user_id");`);
    this.addSql(`create index "external_link_requests_session_id_index" on "external_link_requests" ("session_id");`);

    this.addSql(
      `alter table "external_link_requests" add constraint "external_link_requests_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "external_link_requests" add constraint "external_link_requests_session_id_foreign" foreign key ("session_id") references "auth_sessions" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "external_link_requests" cascade;`);
  }
}
