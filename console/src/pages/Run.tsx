import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { bf } from '../api.ts';
import { Downloads } from '../components/Downloads.tsx';
import { LiveLogs } from '../components/LiveLogs.tsx';
import { Block, ErrorLine, Loaded, RunStatus, when } from '../components/parts.tsx';
import { Recording } from '../components/RecordingPlayer.tsx';
import { Screenshots, stepsOf } from '../components/Screenshots.tsx';
import { hrefOf } from '../route.ts';
import { trpc } from '../trpc.ts';

const ended = (status: string) => status === 'succeeded' || status === 'failed' || status === 'cancelled';

/** A run: its status (followed until it ends), outputs node by node, result, error and live logs. */
export function RunPage({ slug, pipelineId, runId }: { slug: string; pipelineId: string; runId: string }) {
  const queries = useQueryClient();
  const run = useQuery(
    trpc.pipelineRuns.get.queryOptions(
      { project: slug, pipelineId, runId },
      { refetchInterval: (query) => (query.state.data && ended(query.state.data.status.pipeline) ? false : 1_000) },
    ),
  );
  const stop = useMutation({
    mutationFn: () => bf.pipelineRuns.stop.mutate({ project: slug, pipelineId, runId }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.pipelineRuns.get.queryKey({ project: slug, pipelineId, runId }) }),
  });
  return (
    <Loaded query={run}>
      {(data) => {
        const steps = stepsOf(data.nodeOutputs, data.screenshots);
        return (
          <>
            <p>
              <a href={hrefOf({ page: 'pipeline', slug, pipelineId })}>← {data.pipeline.name}</a>
            </p>
            <h1>
              Run <code>{runId.slice(0, 8)}</code> <RunStatus status={data.status.pipeline} />
            </h1>
            <p className="muted">
              version <code>{data.version.slice(0, 8)}</code> · created {when(data.created)} · started {when(data.started)} · finished{' '}
              {when(data.finished)}
            </p>
            {!ended(data.status.pipeline) && (
              <button type="button" onClick={() => stop.mutate()} disabled={stop.isPending}>
                Stop the run
              </button>
            )}
            <ErrorLine error={stop.error} />
            {data.error && (
              <p className="error" role="alert" aria-label="run error">
                {data.error.node ? (
                  <>
                    Node <code>{data.error.node}</code>:{' '}
                  </>
                ) : null}
                {data.error.message} <span className="muted">({data.error.code})</span>
              </p>
            )}
            {data.outputsWithheld && (
              <p className="muted">The run read cookies: its outputs are shown only to those who may read the session's.</p>
            )}
            {data.result && (
              <>
                <h2>Result</h2>
                <Block label="result">{JSON.stringify(data.result, null, 2)}</Block>
              </>
            )}
            <h2>Steps</h2>
            <p className="muted">
              Screenshots:{' '}
              {data.screenshotMode === 'steps' ? 'after every step' : data.screenshotMode === 'failures' ? 'where a step failed' : 'none'}
            </p>
            {steps.length === 0 ? (
              <p className="muted">None yet.</p>
            ) : (
              <table aria-label="steps">
                <thead>
                  <tr>
                    <th>Node</th>
                    <th>Outputs</th>
                    <th>Screenshots</th>
                  </tr>
                </thead>
                <tbody>
                  {steps.map((step) => (
                    <tr key={step.node}>
                      <td>
                        <code>{step.node}</code>
                      </td>
                      <td>{step.has ? <OutputsCell outputs={step.outputs} /> : <span className="muted">none</span>}</td>
                      <td>
                        <Screenshots shots={step.shots} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {data.recording && ended(data.status.pipeline) && (
              <>
                <h2>Recording</h2>
                <Recording
                  slug={slug}
                  sessionId={data.recording.split('/').at(-3) as string}
                  resourceId={data.recording.split('/').at(-2) as string}
                  runLogs={`/${encodeURIComponent(slug)}/api/pipelines/${encodeURIComponent(pipelineId)}/${encodeURIComponent(runId)}/logs`}
                />
              </>
            )}
            {data.resources.map((r) => (
              <Downloads key={r.id} slug={slug} sessionId={r.session} resourceId={r.id} live={!ended(data.status.pipeline)} heading />
            ))}
            {Object.keys(data.args).length > 0 && (
              <>
                <h2>Arguments</h2>
                <Block label="arguments">{JSON.stringify(data.args, null, 2)}</Block>
              </>
            )}
            <h2>Logs</h2>
            <LiveLogs
              url={`/${encodeURIComponent(slug)}/api/pipelines/${encodeURIComponent(pipelineId)}/${encodeURIComponent(runId)}/logs`}
              screenshotHref={(id) => `/${encodeURIComponent(slug)}/api/screenshots/${encodeURIComponent(id)}`}
            />
          </>
        );
      }}
    </Loaded>
  );
}

/** A node's outputs: a list of records as a table, anything else as JSON. */
function OutputsCell({ outputs }: { outputs: unknown }) {
  if (!outputs || typeof outputs !== 'object') return <code>{JSON.stringify(outputs)}</code>;
  return (
    <dl className="outputs">
      {Object.entries(outputs as Record<string, unknown>).map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{isRecordList(value) ? <RecordTable rows={value} /> : <code>{JSON.stringify(value)}</code>}</dd>
        </div>
      ))}
    </dl>
  );
}

const isRecordList = (value: unknown): value is Record<string, unknown>[] =>
  Array.isArray(value) && value.length > 0 && value.every((row) => row && typeof row === 'object' && !Array.isArray(row));

function RecordTable({ rows }: { rows: Record<string, unknown>[] }) {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return (
    <table className="inner">
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column}>{column}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity of their own
          <tr key={index}>
            {columns.map((column) => (
              <td key={column}>{typeof row[column] === 'string' ? (row[column] as string) : JSON.stringify(row[column])}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
