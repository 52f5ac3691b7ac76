import { Migration } from '@mikro-orm/migrations';

export class Migration20261122053743 extends Migration {
  override name = 'Migration20261122053743';

  override up(): void | Promise<void> {
    this.addSql(`alter table "pipeline_runs" add "reads_cookies" boolean not null default false;`);
    // Earlier runs: from their version's plan, with the node types that read cookies as of this
    // migration (page.cookies, page.evaluate), so the run view does not show what they read.
    // A literal that happens to look like such a node only withholds more, never less.
    this.addSql(`update "pipeline_runs" r set "reads_cookies" = true
      from (
        select id, plan from "pipeline_versions"
        union all
        select id, plan from "function_versions"
      ) v
      where v.id = coalesce(r."version_id", r."function_version_id")
        and exists (
          select 1 from jsonb_path_query(v.plan, 'lax $.**.type') as t(type)
          where t.type in ('"page.cookies"'::jsonb, '"page.evaluate"'::jsonb)
        );`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "pipeline_runs" drop column "reads_cookies";`);
  }
}
