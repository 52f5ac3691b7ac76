import { Alert, Button, Checkbox, Code, Group, NativeSelect, Stack, Text, TextInput, Title } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useRef, useState } from 'react';
import { bf } from '../api.ts';
import { DataTable, Empty } from '../components/DataTable.tsx';
import { ConfirmButton, Copyable, ErrorLine, fieldError, Loaded, usePagedList, when } from '../components/parts.tsx';
import { trpc } from '../trpc.ts';

type AccessType = 'full' | 'projects' | 'custom';

/**
 * Your API keys: created with their scope (everything you may do, some projects, or permission
 * strings), the secret shown once, revoked at once.
 */
export function ApiKeysPage() {
  const queries = useQueryClient();
  const keys = usePagedList((page) => trpc.apiKeys.list.queryOptions(page), 'API keys');
  const projects = useQuery(trpc.projects.list.queryOptions({ my: true, limit: 100 }));
  const [name, setName] = useState('');
  const nameInput = useRef<HTMLInputElement>(null);
  const [accessType, setAccessType] = useState<AccessType>('full');
  const [projectIds, setProjectIds] = useState<string[]>([]);
  const [permissions, setPermissions] = useState('');
  const create = useMutation({
    mutationFn: () =>
      bf.apiKeys.create.mutate({
        name,
        accessType,
        projectIds: accessType === 'projects' ? projectIds : [],
        permissions: accessType === 'custom' ? permissions.split(/[\s,]+/).filter(Boolean) : [],
      }),
    onSuccess: () => {
      setName('');
      return queries.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => bf.apiKeys.delete.mutate({ id }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() }),
  });
  const projectName = (id: string) => projects.data?.find((project) => project.id === id)?.slug ?? id;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <Title order={1} size="h2" mb="md">
        API keys
      </Title>
      {create.data && (
        <Alert role="status" color="green" variant="light" mb="md" title={`${create.data.name} is created`}>
          <Text size="sm">Copy its secret now: it is not shown again.</Text>
          <Copyable label="Secret" value={create.data.secret} />
        </Alert>
      )}
      <Loaded query={keys}>
        {(rows) =>
          rows.length === 0 ? (
            <Empty
              title="No keys yet."
              text="A key lets a script, a CI job or an MCP client call the API as you. Name one below and create it."
              action={{ label: 'Name the first key', onClick: () => nameInput.current?.focus() }}
            />
          ) : (
            <DataTable
              label="API keys"
              rows={rows}
              rowKey={(key) => key.id}
              filterBy={(key) => key.name}
              columns={[
                { key: 'name', label: 'Name', sortBy: (key) => key.name, render: (key) => key.name },
                { key: 'prefix', label: 'Key', render: (key) => <Code>{key.keyPrefix}…</Code> },
                {
                  key: 'scope',
                  label: 'Scope',
                  render: (key) => (
                    <>
                      {key.accessType === 'full' && 'everything you may do'}
                      {key.accessType === 'projects' && `projects: ${key.projectIds.map(projectName).join(', ')}`}
                      {key.accessType === 'custom' && key.permissions.join(', ')}
                    </>
                  ),
                },
                { key: 'used', label: 'Last used', sortBy: (key) => key.lastUsed ?? '', render: (key) => when(key.lastUsed) },
                {
                  key: 'revoke',
                  label: 'Actions',
                  render: (key) => (
                    <ConfirmButton
                      question={`Revoke ${key.name}? Whatever uses it stops working.`}
                      yes="Yes, revoke"
                      onConfirm={() => revoke.mutate(key.id)}
                      disabled={revoke.isPending}
                    >
                      Revoke
                    </ConfirmButton>
                  ),
                },
              ]}
            />
          )
        }
      </Loaded>
      {keys.pager}
      <ErrorLine error={revoke.error} />
      <Title order={2} size="h3" mt="xl" mb="sm">
        New key
      </Title>
      <Stack renderRoot={(props) => <form {...props} />} onSubmit={submit} gap="sm" maw={480}>
        <TextInput
          ref={nameInput}
          label="Name"
          required
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldError(create.error, ['name'])}
        />
        <NativeSelect
          label="Scope"
          value={accessType}
          onChange={(event) => setAccessType(event.currentTarget.value as AccessType)}
          data={[
            { value: 'full', label: 'Everything you may do' },
            { value: 'projects', label: 'Some projects' },
            { value: 'custom', label: 'Permission strings' },
          ]}
        />
        {accessType === 'projects' && (
          <Checkbox.Group label="Projects" value={projectIds} onChange={setProjectIds} error={fieldError(create.error, ['projectIds'])}>
            <Stack gap={6} mt={4}>
              {projects.data?.map((project) => (
                <Checkbox key={project.id} value={project.id} label={project.name} />
              ))}
            </Stack>
          </Checkbox.Group>
        )}
        {accessType === 'custom' && (
          <TextInput
            label="Permission strings"
            description="e.g. sessions.read or my-shop:pipelines.run, separated by spaces or commas"
            required
            value={permissions}
            onChange={(event) => setPermissions(event.currentTarget.value)}
            error={fieldError(create.error, ['permissions'])}
          />
        )}
        <Group>
          <Button type="submit" loading={create.isPending} leftSection={<IconPlus size={16} />}>
            Create key
          </Button>
        </Group>
        <ErrorLine error={create.error} />
      </Stack>
    </>
  );
}
