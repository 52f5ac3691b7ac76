import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../../access.tsx';
import { bf } from '../../api.ts';
import { ModelOptions } from '../../components/ModelOptions.tsx';
import { ErrorLine } from '../../components/parts.tsx';
import { useSessionChoice } from '../../components/SessionPicker.tsx';
import { hrefOf } from '../../route.ts';
import { trpc } from '../../trpc.ts';

/** On a pipeline's page: a prompt, a session and a model start an analysis of that session's browser. */
export function AnalysisForm({ slug, pipelineId }: { slug: string; pipelineId: string }) {
  const { session, picker } = useSessionChoice(slug);
  const models = useQuery(trpc.agentJobs.analysisModels.queryOptions({ project: slug }));
  const [prompt, setPrompt] = useState('');
  const [model, setModel] = useState('builtin');
  const start = useMutation({
    mutationFn: () => bf.agentJobs.startAnalysis.mutate({ project: slug, pipelineId, session, model, prompt }),
    onSuccess: (answer) => {
      window.location.hash = hrefOf({ page: 'analysis', slug, pipelineId, analysisId: answer.id });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate();
  };
  return (
    <form onSubmit={submit} className="card stack" aria-label="propose a version">
      <strong>Propose the next version</strong>
      <p className="muted">
        A model studies the session's browser in a tab of its own and proposes steps; quoted values become parameters, and values named like
        a secret reach no model.
      </p>
      <label>
        What should the pipeline do?
        <textarea
          rows={3}
          required
          value={prompt}
          placeholder='Open https://shop.example/login, log in with email "me@example.com" and password "…", and extract the orders'
          onChange={(event) => setPrompt(event.target.value)}
        />
      </label>
      <div className="row">
        {picker}
        <label>
          Model
          <select value={model} onChange={(event) => setModel(event.target.value)}>
            <ModelOptions models={models.data} />
          </select>
        </label>
        <WriteButton type="submit" disabled={start.isPending || !session}>
          Analyse
        </WriteButton>
      </div>
      <ErrorLine error={start.error ?? models.error} />
    </form>
  );
}
