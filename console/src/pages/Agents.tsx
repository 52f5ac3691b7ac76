import { Alert, Anchor, Blockquote, Checkbox, Group, NativeSelect, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { WriteButton } from '../access.tsx';
import { bf } from '../api.ts';
import { LazyPipelineGraph } from '../components/LazyPipelineGraph.tsx';
import { LiveLogs } from '../components/LiveLogs.tsx';
import { ModelOptions } from '../components/ModelOptions.tsx';
import { Block, ErrorLine, Loaded, StateBadge, when } from '../components/parts.tsx';
import { ProposalPictures, Screenshots } from '../components/Screenshots.tsx';
import { hrefOf } from '../route.ts';
import { trpc } from '../trpc.ts';

type Step = { action: string; selector?: string; url?: string; value?: string; output?: string; evidence?: string };
type Proposal = {
  goal?: string;
  steps?: Step[];
  parameters?: { name: string; description?: string; secret?: boolean }[];
  outputs?: { name: string; kind?: string; fields?: string[] }[];
  risks?: string[];
};

const stopped = (agent: string | undefined) => agent === 'stopped';

/** An analysis: followed until its agent stops, then its proposal as steps, and accept (a generation) or reject. */
export function AnalysisPage({ slug, pipelineId, analysisId }: { slug: string; pipelineId: string; analysisId: string }) {
  const analysis = useQuery(
    trpc.agentJobs.getAnalysis.queryOptions(
      { project: slug, analysisId },
      { refetchInterval: (query) => (stopped(query.state.data?.agent) ? false : 1_000) },
    ),
  );
  const models = useQuery(trpc.agentJobs.generationModels.queryOptions({ project: slug }));
  const [model, setModel] = useState('builtin');
  const accept = useMutation({
    mutationFn: () => bf.agentJobs.acceptAnalysis.mutate({ project: slug, analysisId, model }),
    onSuccess: (answer) => {
      window.location.hash = hrefOf({ page: 'generation', slug, pipelineId, generationId: answer.id });
    },
  });
  const reject = useMutation({
    mutationFn: () => bf.agentJobs.rejectAnalysis.mutate({ project: slug, analysisId }),
    onSuccess: () => analysis.refetch(),
  });
  return (
    <Loaded query={analysis}>
      {(data) => {
        const proposal = (data.output ?? null) as Proposal | null;
        return (
          <>
            <JobHeading kind="Analysis" slug={slug} pipelineId={pipelineId} job={data} />
            <Text size="sm" c="dimmed">
              {data.model} · {when(data.created)} · {data.usage.calls} model calls, {data.usage.inputTokens + data.usage.outputTokens}{' '}
              tokens
            </Text>
            <Blockquote my="sm" p="sm">
              {data.prompt}
            </Blockquote>
            <AgentProgress kind="analysis" slug={slug} id={analysisId} running={data.agent === 'running'} />
            {data.error && (
              <Alert color="red" role="alert" my="sm">
                {data.error.message} ({data.error.code})
              </Alert>
            )}
            {proposal && <ProposalView proposal={proposal} />}
            <ProposalPictures shots={data.screenshots} />
            {data.generations.length > 0 && (
              <p>
                Generations:{' '}
                {data.generations.map((generation) => (
                  <a key={generation.id} href={hrefOf({ page: 'generation', slug, pipelineId, generationId: generation.id })}>
                    {generation.id.slice(0, 8)} ({stateOf(generation)}){' '}
                  </a>
                ))}
              </p>
            )}
            {stopped(data.agent) && proposal && data.status === 'pending' && (
              <Group align="flex-end" gap="sm" mt="md">
                <NativeSelect
                  label="Generate with"
                  value={model}
                  onChange={(event) => setModel(event.currentTarget.value)}
                  miw={0}
                  maw="100%"
                >
                  <ModelOptions models={models.data} />
                </NativeSelect>
                <WriteButton onClick={() => accept.mutate()} loading={accept.isPending}>
                  Accept and generate
                </WriteButton>
                <WriteButton variant="default" onClick={() => reject.mutate()} disabled={reject.isPending}>
                  Reject
                </WriteButton>
              </Group>
            )}
            <ErrorLine error={accept.error ?? reject.error} />
          </>
        );
      }}
    </Loaded>
  );
}

/** The proposal: its goal, its steps with the selectors found on the live page, parameters, outputs and risks. */
function ProposalView({ proposal }: { proposal: Proposal }) {
  return (
    <section aria-label="proposal">
      <h2>Proposal</h2>
      {proposal.goal && <p>{proposal.goal}</p>}
      <ol className="steps">
        {proposal.steps?.map((step, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: steps are an ordered list without ids
          <li key={index}>
            <strong>{step.action}</strong> {step.selector && <code className="selector">{step.selector}</code>}{' '}
            {step.url && <code>{step.url}</code>}
            {step.value !== undefined && <span className="muted"> ← {step.value}</span>}
            {step.output && <span className="muted"> → {step.output}</span>}
            {step.evidence && <div className="muted">{step.evidence}</div>}
          </li>
        ))}
      </ol>
      {!!proposal.parameters?.length && (
        <p>
          Parameters:{' '}
          {proposal.parameters.map((parameter) => (
            <code key={parameter.name}>
              {parameter.name}
              {parameter.secret ? ' (secret)' : ''}{' '}
            </code>
          ))}
        </p>
      )}
      {!!proposal.outputs?.length && (
        <p>
          Outputs:{' '}
          {proposal.outputs.map((output) => (
            <code key={output.name}>
              {output.name}
              {output.kind ? ` (${output.kind}${output.fields ? `: ${output.fields.join(', ')}` : ''})` : ''}{' '}
            </code>
          ))}
        </p>
      )}
      {!!proposal.risks?.length && (
        <ul className="muted">
          {proposal.risks.map((risk) => (
            <li key={risk}>{risk}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** A generation: followed until it stops, then the generated graph, its compile errors and dry run, and accept or reject. */
export function GenerationPage({ slug, pipelineId, generationId }: { slug: string; pipelineId: string; generationId: string }) {
  const generation = useQuery(
    trpc.agentJobs.getGeneration.queryOptions(
      { project: slug, generationId },
      { refetchInterval: (query) => (stopped(query.state.data?.agent) ? false : 1_000) },
    ),
  );
  const [force, setForce] = useState(false);
  const accept = useMutation({
    mutationFn: () => bf.agentJobs.acceptGeneration.mutate({ project: slug, generationId, ...(force ? { force } : {}) }),
    onSuccess: () => {
      window.location.hash = hrefOf({ page: 'pipeline', slug, pipelineId });
    },
  });
  const reject = useMutation({
    mutationFn: () => bf.agentJobs.rejectGeneration.mutate({ project: slug, generationId }),
    onSuccess: () => generation.refetch(),
  });
  return (
    <Loaded query={generation}>
      {(data) => {
        const verified = data.dryRun?.status === 'succeeded' && !data.dryRun.mismatches?.length && data.errors.length === 0;
        return (
          <>
            <JobHeading kind="Generation" slug={slug} pipelineId={pipelineId} job={data} />
            <Text size="sm" c="dimmed">
              {data.model} · {data.attempts} attempts · {when(data.created)}
            </Text>
            <AgentProgress kind="generation" slug={slug} id={generationId} running={data.agent === 'running'} />
            {data.error && (
              <Alert color="red" role="alert" my="sm">
                {data.error.message} ({data.error.code})
              </Alert>
            )}
            {data.output && (
              <>
                <Title order={2} size="h3" mt="md">
                  The generated graph
                </Title>
                <LazyPipelineGraph source={data.output} errors={data.errors} />
              </>
            )}
            {data.errors.length > 0 && (
              <ul aria-label="generation errors">
                {data.errors.map((error) => (
                  <li key={`${error.node}:${error.output}:${error.code}:${error.message}`} className="error">
                    {error.node && <code>{error.node}</code>} {error.message} ({error.code})
                  </li>
                ))}
              </ul>
            )}
            {data.dryRun && (
              <section aria-label="dry run">
                <Title order={2} size="h3" mt="md">
                  Dry run <StateBadge state={data.dryRun.status} />
                </Title>
                {data.dryRun.error && (
                  <p className="error">
                    {data.dryRun.error.node && <code>{data.dryRun.error.node}</code>} {data.dryRun.error.message} ({data.dryRun.error.code})
                  </p>
                )}
                {data.dryRun.result && <Block label="dry-run result">{JSON.stringify(data.dryRun.result, null, 2)}</Block>}
                {data.dryRun.screenshots.length > 0 && (
                  <>
                    <Title order={3} size="h4" my="xs">
                      Its pages, step by step
                    </Title>
                    <Screenshots shots={data.dryRun.screenshots} />
                  </>
                )}
              </section>
            )}
            {stopped(data.agent) && data.status === 'pending' && data.output && (
              <Group gap="sm" mt="md">
                {!verified && (
                  <Checkbox
                    checked={force}
                    onChange={(event) => setForce(event.currentTarget.checked)}
                    label="Accept although the dry run did not verify it"
                  />
                )}
                <WriteButton onClick={() => accept.mutate()} loading={accept.isPending} disabled={!verified && !force}>
                  Accept as the new version
                </WriteButton>
                <WriteButton variant="default" onClick={() => reject.mutate()} disabled={reject.isPending}>
                  Reject
                </WriteButton>
              </Group>
            )}
            <ErrorLine error={accept.error ?? reject.error} />
          </>
        );
      }}
    </Loaded>
  );
}

/** Back to the pipeline, and the job's title with its state: `running` while its agent works, else its decision. */
function JobHeading({ kind, slug, pipelineId, job }: { kind: 'Analysis' | 'Generation'; slug: string; pipelineId: string; job: Job }) {
  return (
    <>
      <Anchor href={hrefOf({ page: 'pipeline', slug, pipelineId })} size="sm">
        ← The pipeline
      </Anchor>
      <Title order={1} size="h2" mt={4} mb={4}>
        {kind} <StateBadge state={stateOf(job)} />
      </Title>
    </>
  );
}

type Job = { agent: string; status: string; error?: unknown; output?: unknown };

/**
 * What a job is at now, in a person's words: `running` while its agent works; once it stopped, its
 * decision (accepted, rejected), else `failed` (an error, no output) or `ready to review` (an output
 * waiting for accept or reject), never the API's undecided `pending` of a job that has finished.
 */
export function stateOf(job: Job) {
  if (job.agent === 'running') return 'running';
  if (job.status !== 'pending') return job.status;
  if (!stopped(job.agent)) return 'queued';
  if (job.output) return 'ready to review';
  return job.error ? 'failed' : 'finished';
}

/**
 * An agent's steps as they happen: a bar while it runs, and its messages and tool calls (the job's
 * log, live over server-sent events), open while it runs.
 */
function AgentProgress({ kind, slug, id, running }: { kind: 'analysis' | 'generation'; slug: string; id: string; running: boolean }) {
  return (
    <details open={running} className="progress">
      <summary>
        {running ? (
          <>
            The {kind} is under way <progress aria-label={`${kind} under way`} />
          </>
        ) : (
          `The ${kind}’s steps`
        )}
      </summary>
      <LiveLogs url={`/${encodeURIComponent(slug)}/api/${kind}/${encodeURIComponent(id)}/logs`} />
    </details>
  );
}
