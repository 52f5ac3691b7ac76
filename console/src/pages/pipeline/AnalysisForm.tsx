import { Box, Group, NativeSelect, Paper, Text, Textarea } from '@mantine/core';
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
    <Paper withBorder p="md" radius="md" component="form" onSubmit={submit} aria-label="propose a version">
      <Text fw={600}>Propose the next version</Text>
      <Text size="sm" c="dimmed" mb="sm">
        A model studies the session's browser in a tab of its own and proposes steps; quoted values become parameters, and values named like
        a secret reach no model.
      </Text>
      <Textarea
        label="What should the pipeline do?"
        autosize
        minRows={3}
        required
        withAsterisk={false}
        value={prompt}
        placeholder='Open https://shop.example/login, log in with email "me@example.com" and password "…", and extract the orders'
        onChange={(event) => setPrompt(event.currentTarget.value)}
      />
      <Group align="flex-end" gap="sm" mt="sm" wrap="wrap">
        <Box miw={0} maw="100%">
          {picker}
        </Box>
        {/* A model's description may be long: the select is as wide as the column at most, and cuts it. */}
        <NativeSelect
          label="Model"
          value={model}
          onChange={(event) => setModel(event.currentTarget.value)}
          miw={0}
          maw="100%"
          style={{ flex: '1 1 12rem' }}
        >
          <ModelOptions models={models.data} />
        </NativeSelect>
        <WriteButton type="submit" loading={start.isPending} disabled={!session}>
          Analyse
        </WriteButton>
      </Group>
      <ErrorLine error={start.error ?? models.error} />
    </Paper>
  );
}
