import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ProjectAccessProvider, useProjectAccessOf } from './access.tsx';
import { bf } from './api.ts';
import { Loaded } from './components/parts.tsx';
import { AccountPage } from './pages/Account.tsx';
import { AnalysisPage, GenerationPage } from './pages/Agents.tsx';
import { ApiKeysPage } from './pages/ApiKeys.tsx';
import { BillingPage } from './pages/Billing.tsx';
import { HostsPage } from './pages/Hosts.tsx';
import { PipelinePage } from './pages/Pipeline.tsx';
import { ProjectPage } from './pages/Project.tsx';
import { ProjectsPage } from './pages/Projects.tsx';
import { MorePageView } from './pages/project/morePages.tsx';
import { RunPage } from './pages/Run.tsx';
import { SecondFactor, SignIn, VerifyEmail } from './pages/SignIn.tsx';
import { hrefOf, useRoute } from './route.ts';
import { trpc } from './trpc.ts';

/** Who is signed in decides what shows: the sign-in steps, or the console. */
export function App() {
  const auth = useQuery(trpc.auth.status.queryOptions());
  return (
    <Loaded query={auth} page>
      {({ status, user }) => {
        if (status === 'anonymous' || !user) return <SignIn />;
        if (status === '2fa_required') return <SecondFactor />;
        if (status === 'email_not_verified') return <VerifyEmail email={user.email} />;
        return <Console email={user.email} isAdmin={user.isAdmin} />;
      }}
    </Loaded>
  );
}

function Console({ email, isAdmin }: { email: string; isAdmin: boolean }) {
  const route = useRoute();
  const queries = useQueryClient();
  const signOut = useMutation({
    mutationFn: () => bf.auth.logout.query(),
    onSuccess: () => queries.resetQueries(),
  });
  return (
    <>
      <header className="bar">
        <a className="brand" href={hrefOf({ page: 'projects' })}>
          Browserflow
        </a>
        <nav>
          <a
            href={hrefOf({ page: 'projects' })}
            aria-current={
              ['projects', 'project', 'pipeline', 'run', 'analysis', 'generation', 'more'].includes(route.page) ? 'page' : undefined
            }
          >
            Projects
          </a>
          <a href={hrefOf({ page: 'keys' })} aria-current={route.page === 'keys' ? 'page' : undefined}>
            API keys
          </a>
          <a href={hrefOf({ page: 'billing' })} aria-current={route.page === 'billing' ? 'page' : undefined}>
            Billing
          </a>
          {isAdmin && (
            <a href={hrefOf({ page: 'hosts' })} aria-current={route.page === 'hosts' ? 'page' : undefined}>
              Hosts
            </a>
          )}
        </nav>
        <a className="who" href={hrefOf({ page: 'account' })} aria-current={route.page === 'account' ? 'page' : undefined}>
          {email}
        </a>
        <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <main className="page">
        {route.page === 'projects' && <ProjectsPage />}
        {'slug' in route && (
          <ProjectScope slug={route.slug}>
            {route.page === 'project' && <ProjectPage slug={route.slug} tab={route.tab} />}
            {route.page === 'pipeline' && <PipelinePage slug={route.slug} pipelineId={route.pipelineId} />}
            {route.page === 'run' && <RunPage slug={route.slug} pipelineId={route.pipelineId} runId={route.runId} />}
            {route.page === 'analysis' && <AnalysisPage slug={route.slug} pipelineId={route.pipelineId} analysisId={route.analysisId} />}
            {route.page === 'generation' && (
              <GenerationPage slug={route.slug} pipelineId={route.pipelineId} generationId={route.generationId} />
            )}
            {/* r37b: the pages of morePages.tsx, until r37a's shell routes them */}
            {route.page === 'more' && <MorePageView project={route.slug} pageKey={route.key} />}
          </ProjectScope>
        )}
        {route.page === 'keys' && <ApiKeysPage />}
        {route.page === 'hosts' && <HostsPage />}
        {route.page === 'account' && <AccountPage />}
        {route.page === 'billing' && <BillingPage back={route.back} />}
      </main>
    </>
  );
}

/** A project's pages: what the user may do there, for the buttons that would change it, and a note when it is read-only. */
function ProjectScope({ slug, children }: { slug: string; children: ReactNode }) {
  const project = useQuery(trpc.projects.get.queryOptions({ project: slug }));
  const access = useProjectAccessOf(project.data);
  return (
    <ProjectAccessProvider access={access}>
      {access.readOnly && (
        <p className="note" role="note">
          {access.why}
        </p>
      )}
      {children}
    </ProjectAccessProvider>
  );
}
