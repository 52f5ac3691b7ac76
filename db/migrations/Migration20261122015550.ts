import { Migration } from '@mikro-orm/migrations';

export class Migration20261122015550 extends Migration {
  override name = 'Migration20261122015550';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "mails" ("id" uuid not null, "to" varchar(320) not null, "subject" varchar(300) not null, "text" text null, "status" text not null default 'queued', "attempts" int not null default 0, "sent_at" timestamptz null, "created" timestamptz not null, primary key ("id"));`,
    );

    this.addSql(
      `create table "users" ("id" uuid not null, "email" varchar(320) not null, "first_name" varchar(100) not null, "last_name" varchar(100) not null, "password_hash" varchar(255) null, "email_verified" boolean not null default false, "is_admin" boolean not null default false, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);

    this.addSql(
      `create table "projects" ("id" uuid not null, "name" varchar(200) not null, "description" text not null default '', "slug" varchar(64) not null, "visibility" text not null default 'private', "owner_id" uuid not null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "projects" add constraint "projects_slug_unique" unique ("slug");`);
    this.addSql(`create index "projects_owner_id_index" on "projects" ("owner_id");`);

    this.addSql(
      `create table "one_time_tokens" ("id" uuid not null, "user_id" uuid not null, "purpose" text not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "one_time_tokens_user_id_index" on "one_time_tokens" ("user_id");`);
    this.addSql(`alter table "one_time_tokens" add constraint "one_time_tokens_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "external_identities" ("id" uuid not null, "user_id" uuid not null, "provider" varchar(64) not null, "subject" varchar(255) not null, "email" varchar(320) null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "external_identities_user_id_index" on "external_identities" ("user_id");`);
    this.addSql(
      `alter table "external_identities" add constraint "external_identities_provider_subject_unique" unique ("provider", "subject");`,
    );

    this.addSql(
      `create table "auth_sessions" ("id" uuid not null, "user_id" uuid not null, "kind" text not null, "remember" boolean not null, "expires_at" timestamptz not null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "auth_sessions_user_id_index" on "auth_sessions" ("user_id");`);

    this.addSql(
      `create table "api_keys" ("id" uuid not null, "user_id" uuid not null, "name" varchar(200) not null, "access_type" text not null, "key_prefix" varchar(32) not null, "secret_hash" varchar(64) not null, "permissions" jsonb not null default '[]', "last_used" timestamptz null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "api_keys_user_id_index" on "api_keys" ("user_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_prefix_unique" unique ("key_prefix");`);

    this.addSql(
      `create table "api_key_projects" ("api_key_id" uuid not null, "project_id" uuid not null, primary key ("api_key_id", "project_id"));`,
    );

    this.addSql(`alter table "mails" add constraint "mails_status_check" check ("status" in ('queued', 'sent', 'outbox', 'failed'));`);

    this.addSql(
      `alter table "projects" add constraint "projects_owner_id_foreign" foreign key ("owner_id") references "users" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "projects" add constraint "projects_visibility_check" check ("visibility" in ('public', 'private'));`);

    this.addSql(
      `alter table "one_time_tokens" add constraint "one_time_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "one_time_tokens" add constraint "one_time_tokens_purpose_check" check ("purpose" in ('verify_email', 'reset_password'));`,
    );

    this.addSql(
      `alter table "external_identities" add constraint "external_identities_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "auth_sessions" add constraint "auth_sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "auth_sessions" add constraint "auth_sessions_kind_check" check ("kind" in ('full', '2fa_pending'));`);

    this.addSql(
      `alter table "api_keys" add constraint "api_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "api_keys" add constraint "api_keys_access_type_check" check ("access_type" in ('full', 'projects', 'custom'));`,
    );

    this.addSql(
      `alter table "api_key_projects" add constraint "api_key_projects_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "api_key_projects" add constraint "api_key_projects_project_id_foreign" foreign key ("project_id") references "projects" ("id") on update cascade on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "projects" drop constraint "projects_owner_id_foreign";`);
    this.addSql(`alter table "one_time_tokens" drop constraint "one_time_tokens_user_id_foreign";`);
    this.addSql(`alter table "external_identities" drop constraint "external_identities_user_id_foreign";`);
    this.addSql(`alter table "auth_sessions" drop constraint "auth_sessions_user_id_foreign";`);
    this.addSql(`alter table "api_keys" drop constraint "api_keys_user_id_foreign";`);
    this.addSql(`alter table "api_key_projects" drop constraint "api_key_projects_project_id_foreign";`);
    this.addSql(`alter table "api_key_projects" drop constraint "api_key_projects_api_key_id_foreign";`);

    this.addSql(`drop table if exists "mails" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
    this.addSql(`drop table if exists "projects" cascade;`);
    this.addSql(`drop table if exists "one_time_tokens" cascade;`);
    this.addSql(`drop table if exists "external_identities" cascade;`);
    this.addSql(`drop table if exists "auth_sessions" cascade;`);
    this.addSql(`drop table if exists "api_keys" cascade;`);
    this.addSql(`drop table if exists "api_key_projects" cascade;`);
  }
}
