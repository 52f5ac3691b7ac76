import type { EntityManager } from '@mikro-orm/postgresql';
import type { SessionProxy } from '../../../db/entities/BrowserSession.ts';
import { StoredProxy } from '../../../db/entities/index.ts';
import type { Subject } from '../../auth/subject.ts';
import type { Config } from '../../config.ts';
import { BadRequest } from '../../errors.ts';
import { proxyActions } from '../../permissions/permissions.ts';
import { findChild } from '../../projects/projectRows.ts';
import type { ProjectScope } from '../../requestEdge.ts';
import { sealProxyPassword } from './proxyPasswords.ts';
import { proxyProviderFor } from './proxyProviders.ts';

/** What a session's create or update sets of its proxy: only the fields it changes. */
export type SessionProxyChoice = Partial<{ proxy: SessionProxy | null; storedProxy: StoredProxy | null }>;

/**
 * What `proxy` / `proxyId` of a session's create or update set. Either one, not both. A stored
 * proxy must be the project's and readable by the caller; a dynamic one (from the provider, with
 * an id) is copied inline, since the provider's list may change after the session is saved. An
 * inline password is stored sealed; the browser host opens it at launch.
 */
export async function chooseSessionProxy(
  deps: { config: Config; serviceSecret: string },
  em: EntityManager,
  caller: Pick<ProjectScope, 'project' | 'authorize' | 'can'> & { subject: Subject },
  input: { proxy?: SessionProxy | null; proxyId?: string | null },
): Promise<SessionProxyChoice> {
  if (input.proxy && input.proxyId) {
    throw new BadRequest('invalid_input', 'Give either proxy or proxyId, not both', {
      issues: [{ path: ['proxyId'], message: 'either proxy or proxyId' }],
    });
  }
  const choice: SessionProxyChoice = {};
  const sealed = (proxy: SessionProxy): SessionProxy => ({ ...proxy, password: sealProxyPassword(deps.serviceSecret, proxy.password) });
  if (input.proxy !== undefined) choice.proxy = input.proxy && sealed(input.proxy);
  if (input.proxyId === null) choice.storedProxy = null;
  if (input.proxy) choice.storedProxy = null;
  if (input.proxyId) {
    const proxyId = input.proxyId;
    const stored = await findChild(em, StoredProxy, proxyId, { project: caller.project.id });
    if (stored) {
      caller.authorize(proxyActions.read, stored.id);
      choice.storedProxy = stored;
      choice.proxy = null;
    } else {
      const dynamic = caller.can(proxyActions.read)
        ? (await proxyProviderFor(deps.config).listDynamicProxies({ userId: userIdOf(caller.subject), projectId: caller.project.id })).find(
            (candidate) => candidate.id === proxyId,
          )
        : undefined;
      if (!dynamic) {
        throw new BadRequest('unknown_proxy', `Proxy ${proxyId} is not a proxy of this project`, {
          issues: [{ path: ['proxyId'], message: 'unknown proxy' }],
        });
      }
      const { protocol, hostname, port, username, password } = dynamic;
      choice.proxy = sealed({ protocol, hostname, port, username, password });
      choice.storedProxy = null;
    }
  }
  return choice;
}

function userIdOf(subject: Subject) {
  return subject.kind === 'session' || subject.kind === 'apiKey' ? subject.user.id : null;
}
