import { Alert } from '@mantine/core';
import { IconLock } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ProjectAccessProvider, useProjectAccessOf } from './access.tsx';
import { ErrorLine, Loaded } from './components/parts.tsx';
import { AccountPage } from './pages/Account.tsx';
import { AnalysisPage, GenerationPage } from './pages/Agents.tsx';
import { ApiKeysPage } from './pages/ApiKeys.tsx';
import { BillingPage } from './pages/Billing.tsx';
import { HostsPage } from './pages/Hosts.tsx';
import { PipelinePage } from './pages/Pipeline.tsx';
import { ProjectPage } from './pages/Project.tsx';
import { ProjectsPage } from './pages/Projects.tsx';
import { morePages } from './pages/project/morePages.tsx';
import { RunPage } from './pages/Run.tsx';
import { SecondFactor, SignIn, VerifyEmail } from './pages/SignIn.tsx';
import { useRoute } from './route.ts';
import { Shell } from './Shell.tsx';
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
  const more = route.page === 'more' ? morePages.find((page) => page.key === route.key) : undefined;
  return (
    <Shell route={route} email={email} isAdmin={isAdmin}>
      {route.page === 'projects' && <ProjectsPage />}
      {'slug' in route && (
        <ProjectScope slug={route.slug}>
          {route.page === 'project' && <ProjectPage slug={route.slug} tab={route.tab} />}
          {route.page === 'more' &&
            (more ? <more.element project={route.slug} /> : <ErrorLine error={new Error(`No section “${route.key}” here.`)} />)}
          {route.page === 'pipeline' && <PipelinePage slug={route.slug} pipelineId={route.pipelineId} />}
          {route.page === 'run' && <RunPage slug={route.slug} pipelineId={route.pipelineId} runId={route.runId} />}
          {route.page === 'analysis' && <AnalysisPage slug={route.slug} pipelineId={route.pipelineId} analysisId={route.analysisId} />}
          {route.page === 'generation' && (
            <GenerationPage slug={route.slug} pipelineId={route.pipelineId} generationId={route.generationId} />
          )}
        </ProjectScope>
      )}
      {route.page === 'keys' && <ApiKeysPage />}
      {route.page === 'hosts' && <HostsPage />}
      {route.page === 'account' && <AccountPage />}
      {route.page === 'billing' && <BillingPage back={route.back} />}
    </Shell>
  );
}

/** A project's pages: what the user may do there, for the buttons that would change it, and a note when it is read-only. */
function ProjectScope({ slug, children }: { slug: string; children: ReactNode }) {
  const project = useQuery(trpc.projects.get.queryOptions({ project: slug }));
  const access = useProjectAccessOf(project.data);
  return (
    <ProjectAccessProvider access={access}>
      {access.readOnly && (
        <Alert role="note" color="yellow" icon={<IconLock size={18} />} mb="md">
          {access.why}
        </Alert>
      )}
      {children}
    </ProjectAccessProvider>
  );
}
