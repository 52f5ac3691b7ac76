import { Migration } from '@mikro-orm/migrations';

export class Migration20261122032458 extends Migration {
  override name = 'Migration20261122032458';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "mcp_servers" ("id" uuid not null, "project_id" uuid not null, "name" varchar(200) not null, "slug" varchar(64) not null, "description" text not null default '', "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "mcp_servers_project_id_index" on "mcp_servers" ("project_id");`);
    this.addSql(`alter table "mcp_servers" add constraint "mcp_servers_project_id_slug_unique" unique ("project_id", "slug");`);

    this.addSql(
      `create table "functions" ("id" uuid not null, "project_id" uuid not null, "name" varchar(200) not null, "slug" varchar(64) not null, "description" text not null default '', "current_version_id" uuid null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "functions_project_id_index" on "functions" ("project_id");`);
    this.addSql(`alter table "functions" add constraint "functions_project_id_slug_unique" unique ("project_id", "slug");`);

    this.addSql(
      `create table "mcp_server_functions" ("mcp_server_id" uuid not null, "pipeline_function_id" uuid not null, primary key ("mcp_server_id", "pipeline_function_id"));`,
    );

    this.addSql(
      `create table "function_versions" ("id" uuid not null, "function_id" uuid not null, "project_id" uuid not null, "source" jsonb not null, "errors" jsonb not null, "plan" jsonb null, "parameters" jsonb not null, "outputs" jsonb not null, "metadata" jsonb not null, "output_type" varchar(40) not null default 'function', "source_pipeline_id" uuid null, "source_pipeline_version_id" uuid null, "predecessor_id" uuid null, "created" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "function_versions_function_id_index" on "function_versions" ("function_id");`);
    this.addSql(`create index "function_versions_project_id_index" on "function_versions" ("project_id");`);

    this.addSql(
      `create table "mcp_client_configs" ("id" uuid not null, "project_id" uuid not null, "name" varchar(200) not null, "description" text not null default '', "mcp_server_id" uuid not null, "api_key_id" uuid not null, "created" timestamptz not null, "updated" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "mcp_client_configs_project_id_index" on "mcp_client_configs" ("project_id");`);
    this.addSql(`create index "mcp_client_configs_mcp_server_id_index" on "mcp_client_configs" ("mcp_server_id");`);
    this.addSql(`create index "mcp_client_configs_api_key_id_index" on "mcp_client_configs" ("api_key_id");`);
    this.addSql(
      `alter table "mcp_client_configs" add constraint "mcp_client_configs_project_id_name_unique" unique ("project_id", "name");`,
    );

    this.addSql(
      `alter table "mcp_servers" add constraint "mcp_servers_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "functions" add constraint "functions_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "functions" add constraint "functions_current_version_id_foreign" foreign key ("current_version_id") references "function_versions" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "mcp_server_functions" add constraint "mcp_server_functions_mcp_server_id_foreign" foreign key ("mcp_server_id") references "mcp_servers" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_server_functions" add constraint "mcp_server_functions_pipeline_function_id_foreign" foreign key ("pipeline_function_id") references "functions" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "function_versions" add constraint "function_versions_function_id_foreign" foreign key ("function_id") references "functions" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "function_versions" add constraint "function_versions_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "function_versions" add constraint "function_versions_source_pipeline_version_id_foreign" foreign key ("source_pipeline_version_id") references "pipeline_versions" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "function_versions" add constraint "function_versions_predecessor_id_foreign" foreign key ("predecessor_id") references "function_versions" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "mcp_client_configs" add constraint "mcp_client_configs_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_client_configs" add constraint "mcp_client_configs_mcp_server_id_foreign" foreign key ("mcp_server_id") references "mcp_servers" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_client_configs" add constraint "mcp_client_configs_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "mcp_server_functions" drop constraint "mcp_server_functions_mcp_server_id_foreign";`);
    this.addSql(`alter table "mcp_client_configs" drop constraint "mcp_client_configs_mcp_server_id_foreign";`);
    this.addSql(`alter table "mcp_server_functions" drop constraint "mcp_server_functions_pipeline_function_id_foreign";`);
    this.addSql(`alter table "function_versions" drop constraint "function_versions_function_id_foreign";`);
    this.addSql(`alter table "functions" drop constraint "functions_current_version_id_foreign";`);
    this.addSql(`alter table "function_versions" drop constraint "function_versions_predecessor_id_foreign";`);

    this.addSql(`drop table if exists "mcp_servers" cascade;`);
    this.addSql(`drop table if exists "functions" cascade;`);
    this.addSql(`drop table if exists "mcp_server_functions" cascade;`);
    this.addSql(`drop table if exists "function_versions" cascade;`);
    this.addSql(`drop table if exists "mcp_client_configs" cascade;`);
  }
}
