import { BrowserSession, Project } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import { defaultBrowserImage } from '../browsers/launch/images.ts';
import { defaultScreen } from '../browsers/launch/launchSettings.ts';

export const defaultSessionName = 'Default session';

/**
 * The project-created hook that gives every new project a "Default session" (spec 2, Session).
 * Best-effort: the caller logs a failure and keeps the project. Its own EntityManager, so a
 * failed flush here cannot leave anything half-written in the request's unit of work.
 */
export async function provisionDefaultSession(projectId: string, deps: Pick<AppDeps, 'orm'>) {
  const em = deps.orm.em.fork();
  em.create(BrowserSession, {
    project: em.getReference(Project, projectId),
    name: defaultSessionName,
    description: '',
    image: defaultBrowserImage,
    args: '',
    screen: { ...defaultScreen },
    cookies: [],
    proxy: null,
  });
  await em.flush();
}
