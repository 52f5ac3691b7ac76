import { Migration } from '@mikro-orm/migrations';

/**
 * Every change to what a request looks up before deciding anything — API keys and their project
 * lists, users, sign-in sessions, projects — sends a NOTIFY on `access_changes` naming it, from
 * the transaction that makes it; PostgreSQL delivers it on commit to each api process, which
 * drops what it kept of that row (server/auth/accessCache.ts). In triggers, so no write path
 * (a router, an activity, housekeeping, psql) can forget to.
 *
 * The payload is a tag, `<kind>:<id>` or `all` for a TRUNCATE, then the writing session's backend
 * pid (the api process that made the change recognises its own; server/auth/accessChanges.ts).
 * Arguments: the kind, the column holding the id, then columns whose change alone matters to no
 * request (an update touching only those sends nothing: an API key's `last_used` is written as it
 * is used).
 */
export class Migration20261125112629 extends Migration {
  override name = 'Migration20261125112629';

  override up(): void | Promise<void> {
    this.addSql(`
      create function notify_access_change() returns trigger language plpgsql as $$
      declare
        ignored text[] := coalesce(tg_argv[2:], '{}');
        before jsonb;
        after jsonb;
      begin
        if tg_level = 'STATEMENT' then
          perform pg_notify('access_changes', 'all ' || pg_backend_pid());
          return null;
        end if;
        if tg_op <> 'INSERT' then before := to_jsonb(old) - ignored; end if;
        if tg_op <> 'DELETE' then after := to_jsonb(new) - ignored; end if;
        if before is not distinct from after then return null; end if;
        if before is not null then
          perform pg_notify('access_changes', tg_argv[0] || ':' || (before ->> tg_argv[1]) || ' ' || pg_backend_pid());
        end if;
        if after is not null then
          perform pg_notify('access_changes', tg_argv[0] || ':' || (after ->> tg_argv[1]) || ' ' || pg_backend_pid());
        end if;
        return null;
      end
      $$;`);

    for (const [table, args, when] of [
      ['api_keys', `'key', 'id', 'last_used', 'updated'`, 'update or delete'],
      ['api_key_projects', `'key', 'api_key_id'`, 'insert or update or delete'],
      ['users', `'user', 'id', 'updated'`, 'update or delete'],
      ['projects', `'project', 'id', 'updated'`, 'update or delete'],
    ] as const) {
      this.addSql(
        `create trigger "${table}_access_change" after ${when} on "${table}" for each row execute function notify_access_change(${args});`,
      );
      this.addSql(
        `create trigger "${table}_access_truncate" after truncate on "${table}" for each statement execute function notify_access_change();`,
      );
    }
    // A session already expired answers "ended" whatever anyone kept of it: housekeeping's bulk
    // delete of expired rows needs no notification per row.
    this.addSql(
      `create trigger "auth_sessions_access_change" after update or delete on "auth_sessions" for each row when (old.expires_at > now()) execute function notify_access_change('session', 'id');`,
    );
    this.addSql(
      `create trigger "auth_sessions_access_truncate" after truncate on "auth_sessions" for each statement execute function notify_access_change();`,
    );
  }

  override down(): void | Promise<void> {
    for (const table of ['api_keys', 'api_key_projects', 'users', 'projects', 'auth_sessions']) {
      this.addSql(`drop trigger if exists "${table}_access_change" on "${table}";`);
      this.addSql(`drop trigger if exists "${table}_access_truncate" on "${table}";`);
    }
    this.addSql('drop function if exists notify_access_change();');
  }
}
