import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../access.tsx';
import { bf } from '../api.ts';
import { ArgumentInput, argsOf, type Parameter } from '../components/ArgumentInput.tsx';
import { LazyPipelineGraph } from '../components/LazyPipelineGraph.tsx';
import { ErrorLine, FieldIssue, Loaded, RunStatus, when } from '../components/parts.tsx';
import { useSessionChoice } from '../components/SessionPicker.tsx';
import { hrefOf } from '../route.ts';
import { trpc } from '../trpc.ts';
import { AnalysisForm } from './pipeline/AnalysisForm.tsx';

type CompileError = { node: string | null; input?: string; code: string; message: string };

/** A pipeline: its source and the compiler's errors, its versions, a run form and its runs. */
export function PipelinePage({ slug, pipelineId }: { slug: string; pipelineId: string }) {
  const pipeline = useQuery(trpc.pipelines.get.queryOptions({ project: slug, pipelineId }));
  return (
    <Loaded query={pipeline}>
      {(data) => (
        <>
          <p>
            <a href={hrefOf({ page: 'project', slug, tab: 'pipelines' })}>← Pipelines</a>
          </p>
          <h1>{data.name}</h1>
          {data.description && <p className="muted">{data.description}</p>}
          <h2>Graph</h2>
          <LazyPipelineGraph source={data.source} errors={data.errors} />
          <RunForm
            slug={slug}
            pipelineId={pipelineId}
            parameters={(data.source.parameters ?? {}) as Record<string, Parameter>}
            errors={data.errors.length}
          />
          <AnalysisForm slug={slug} pipelineId={pipelineId} />
          <h2>Runs</h2>
          {data.runs.length === 0 && <p className="muted">No runs yet.</p>}
          {!!data.runs.length && (
            <table>
              <thead>
                <tr>
                  <th>Run</th>
                  <th>Status</th>
                  <th>Version</th>
                  <th>Started</th>
                </tr>
              </thead>
              <tbody>
                {data.runs.map((run) => (
                  <tr key={run.id}>
                    <td>
                      <a href={hrefOf({ page: 'run', slug, pipelineId, runId: run.id })}>
                        <code>{run.id.slice(0, 8)}</code>
                      </a>
                    </td>
                    <td>
                      <RunStatus status={run.status.pipeline} />
                    </td>
                    <td>
                      <code>{run.version.slice(0, 8)}</code>
                    </td>
                    <td>{when(run.created)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {/* Keyed by the current version: a new one (saved, or switched to) replaces what the editor shows. */}
          <SourceEditor key={data.version} slug={slug} pipelineId={pipelineId} source={data.source} errors={data.errors} />
          <Versions slug={slug} pipelineId={pipelineId} current={data.version} />
        </>
      )}
    </Loaded>
  );
}

/** The arguments form, made from the parameters: secret ones are password fields. */
function RunForm({
  slug,
  pipelineId,
  parameters,
  errors,
}: {
  slug: string;
  pipelineId: string;
  parameters: Record<string, Parameter>;
  errors: number;
}) {
  const { session, picker } = useSessionChoice(slug);
  const [values, setValues] = useState<Record<string, string>>({});
  const [screenshots, setScreenshots] = useState<'none' | 'failures' | 'steps'>('failures');
  const start = useMutation({
    mutationFn: () => bf.pipelineRuns.start.mutate({ project: slug, pipelineId, session, screenshots, args: argsOf(parameters, values) }),
    onSuccess: ({ id }) => {
      window.location.hash = hrefOf({ page: 'run', slug, pipelineId, runId: id });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate();
  };
  return (
    <form onSubmit={submit} className="card stack" aria-label="run the pipeline">
      <strong>Run</strong>
      {Object.entries(parameters).map(([name, parameter]) => (
        <label key={name}>
          {name}{' '}
          <span className="muted">
            ({parameter.refType ?? 'json'}
            {parameter.default !== undefined ? ', optional' : ''})
          </span>
          <ArgumentInput parameter={parameter} value={values[name] ?? ''} onChange={(value) => setValues({ ...values, [name]: value })} />
          <FieldIssue error={start.error} path={['args', name]} />
        </label>
      ))}
      {picker}
      <label>
        Screenshots{' '}
        <select value={screenshots} onChange={(event) => setScreenshots(event.target.value as typeof screenshots)}>
          <option value="failures">where a step fails</option>
          <option value="steps">after every step</option>
          <option value="none">none</option>
        </select>
      </label>
      <WriteButton type="submit" disabled={start.isPending || !session || errors > 0}>
        Run
      </WriteButton>
      {errors > 0 && <p className="muted">The current version has compiler errors: fix them below to run it.</p>}
      <ErrorLine error={start.error} />
    </form>
  );
}

/**
 * The source as JSON, saved as a new version. The compiler's errors are listed by node and input,
 * and each node they name is marked in the node list beside the editor.
 */
function SourceEditor({
  slug,
  pipelineId,
  source,
  errors,
}: {
  slug: string;
  pipelineId: string;
  source: Record<string, unknown>;
  errors: CompileError[];
}) {
  const queries = useQueryClient();
  const [text, setText] = useState(() => JSON.stringify(source, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (parsed: Record<string, unknown>) => bf.pipelines.updateSource.mutate({ project: slug, pipelineId, source: parsed }),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: trpc.pipelines.get.queryKey({ project: slug, pipelineId }) }),
        queries.invalidateQueries({ queryKey: trpc.pipelines.versions.list.queryKey({ project: slug, pipeline: pipelineId }) }),
      ]),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      setParseError(null);
      save.mutate(parsed);
    } catch (error) {
      setParseError(`Not JSON: ${(error as Error).message}`);
    }
  };
  const nodes = Object.keys((source.nodes ?? {}) as Record<string, unknown>);
  const errorsOf = (node: string | null) => errors.filter((error) => error.node === node);
  return (
    <section>
      <h2>Source</h2>
      <div className="editor">
        <form onSubmit={submit} className="stack wide">
          <textarea
            aria-label="source"
            spellCheck={false}
            rows={Math.min(40, text.split('\n').length + 2)}
            value={text}
            onChange={(event) => setText(event.target.value)}
          />
          <WriteButton type="submit" disabled={save.isPending}>
            Save as a new version
          </WriteButton>
          {parseError && <p className="error">{parseError}</p>}
          <ErrorLine error={save.error} />
        </form>
        <aside aria-label="compiler errors">
          <strong>{errors.length ? `${errors.length} compiler error${errors.length === 1 ? '' : 's'}` : 'Compiles without errors'}</strong>
          {errorsOf(null).map((error) => (
            <p key={`${error.code}:${error.message}`} className="error">
              {error.message} <span className="muted">({error.code})</span>
            </p>
          ))}
          <ul className="nodes">
            {nodes.map((node) => (
              <li key={node} className={errorsOf(node).length ? 'has-error' : undefined}>
                <code>{node}</code>
                {errorsOf(node).map((error) => (
                  <p key={`${error.input}:${error.code}:${error.message}`} className="error">
                    {error.input ? <code>{error.input}</code> : null} {error.message} <span className="muted">({error.code})</span>
                  </p>
                ))}
              </li>
            ))}
          </ul>
          {errors
            .filter((error) => error.node !== null && !nodes.includes(error.node))
            .map((error) => (
              <p key={`${error.node}:${error.code}:${error.message}`} className="error">
                <code>{error.node}</code> {error.message} <span className="muted">({error.code})</span>
              </p>
            ))}
        </aside>
      </div>
    </section>
  );
}

/** The pipeline's versions, newest first; any of them can be made current again. */
function Versions({ slug, pipelineId, current }: { slug: string; pipelineId: string; current: string }) {
  const queries = useQueryClient();
  const versions = useQuery(trpc.pipelines.versions.list.queryOptions({ project: slug, pipeline: pipelineId, limit: 50 }));
  const fork = useMutation({
    mutationFn: (versionId: string) => bf.pipelines.versions.fork.mutate({ sourceProject: slug, versionId }),
    onSuccess: ({ id }) => {
      window.location.hash = hrefOf({ page: 'pipeline', slug, pipelineId: id });
    },
  });
  const switchTo = useMutation({
    mutationFn: (versionId: string) => bf.pipelines.versions.switch.mutate({ project: slug, versionId, pipeline: pipelineId }),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: trpc.pipelines.get.queryKey({ project: slug, pipelineId }) }),
        queries.invalidateQueries({ queryKey: trpc.pipelines.versions.list.queryKey({ project: slug, pipeline: pipelineId }) }),
      ]),
  });
  return (
    <section>
      <h2>Versions</h2>
      <ErrorLine error={switchTo.error ?? fork.error} />
      <Loaded query={versions}>
        {(rows) => (
          <table>
            <thead>
              <tr>
                <th>Version</th>
                <th>Made</th>
                <th>Compiler errors</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {rows.map((version) => (
                <tr key={version.id} aria-label={`version ${version.id}`}>
                  <td>
                    <code>{version.id.slice(0, 8)}</code>
                  </td>
                  <td>{when(version.created)}</td>
                  <td>{version.errorCount}</td>
                  <td>
                    {version.id === current ? (
                      <strong>current</strong>
                    ) : (
                      <WriteButton type="button" onClick={() => switchTo.mutate(version.id)} disabled={switchTo.isPending}>
                        Make current
                      </WriteButton>
                    )}{' '}
                    <WriteButton type="button" onClick={() => fork.mutate(version.id)} disabled={fork.isPending}>
                      Fork
                    </WriteButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </section>
  );
}
