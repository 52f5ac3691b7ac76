import { Alert, Badge, Button, Group, Modal, PasswordInput, Select, Skeleton, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { IconPlus, IconTrash, IconWorldWww } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useProjectAccess } from '../../access.tsx';
import { bf, type RouterOutputs } from '../../api.ts';
import { ConfirmAction } from '../../components/ConfirmAction.tsx';
import { FormError, fieldError } from '../../components/FormErrors.tsx';
import { trpc } from '../../trpc.ts';

type Proxy = RouterOutputs['proxies']['list'][number];

/**
 * Proxies: the project's stored ones (and any the configured provider offers), a form that stores
 * one, and deletion. A password is written, never read back: the list says only whether one is set.
 */
export function ProxiesPage({ project }: { project: string }) {
  const proxies = useQuery(trpc.proxies.list.queryOptions({ project, limit: 200 }));
  const [creating, setCreating] = useState(false);
  const access = useProjectAccess();
  const createButton = (
    <Button
      leftSection={<IconPlus size={16} />}
      onClick={() => setCreating(true)}
      disabled={access.readOnly}
      title={access.readOnly ? access.why : undefined}
    >
      Add proxy
    </Button>
  );
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Proxies</Title>
        {proxies.data && proxies.data.length > 0 && createButton}
      </Group>
      <Text size="sm">A session can send its browser's traffic through one of these.</Text>
      {proxies.isError && <FormError error={proxies.error} fields={[]} title="The proxies could not be read" />}
      {!proxies.data && !proxies.isError && <Skeleton height={80} />}
      {proxies.data?.length === 0 && (
        <Alert variant="light" color="gray" icon={<IconWorldWww size={18} />} title="No proxies yet">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">Add a proxy to give sessions another way out to the web.</Text>
            {createButton}
          </Stack>
        </Alert>
      )}
      {proxies.data && proxies.data.length > 0 && (
        <Table.ScrollContainer minWidth={560}>
          <Table aria-label="proxies" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Address</Table.Th>
                <Table.Th>User</Table.Th>
                <Table.Th>Password</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {proxies.data.map((proxy, index) => (
                <ProxyRow key={proxy.id ?? `dynamic-${index}`} project={project} proxy={proxy} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={creating} onClose={() => setCreating(false)} title="Add proxy">
        {creating && <CreateProxyForm project={project} onDone={() => setCreating(false)} />}
      </Modal>
    </Stack>
  );
}

function ProxyRow({ project, proxy }: { project: string; proxy: Proxy }) {
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: () => bf.proxies.delete.mutate({ project, proxyId: proxy.id as string }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.proxies.list.queryKey({ project }) }),
  });
  const address = `${proxy.protocol}://${proxy.hostname}:${proxy.port}`;
  return (
    <Table.Tr aria-label={`proxy ${proxy.name ?? address}`}>
      <Table.Td>
        {proxy.name ?? '—'}
        {proxy.source === 'dynamic' && (
          <Badge ml="xs" variant="default">
            provider
          </Badge>
        )}
      </Table.Td>
      <Table.Td style={{ overflowWrap: 'anywhere' }}>{address}</Table.Td>
      <Table.Td>{proxy.username ?? '—'}</Table.Td>
      <Table.Td>{proxy.hasPassword ? 'set' : 'none'}</Table.Td>
      <Table.Td>
        {proxy.source === 'db' && proxy.id && (
          <ConfirmAction
            size="xs"
            color="red"
            variant="default"
            leftSection={<IconTrash size={14} />}
            title="Delete this proxy?"
            question={`${address} is removed for good; sessions that use it start without a proxy.`}
            yes="Delete proxy"
            loading={remove.isPending}
            onConfirm={() => remove.mutate()}
          >
            Delete
          </ConfirmAction>
        )}
        {remove.error && (
          <Text size="xs" c="red" role="alert">
            {remove.error.message}
          </Text>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

const fields = ['name', 'protocol', 'hostname', 'port', 'username', 'password'] as const;

function CreateProxyForm({ project, onDone }: { project: string; onDone: () => void }) {
  const queries = useQueryClient();
  const [values, setValues] = useState({ name: '', protocol: 'http', hostname: '', port: '', username: '', password: '' });
  const set = (field: keyof typeof values) => (value: string) => setValues({ ...values, [field]: value });
  const create = useMutation({
    mutationFn: () =>
      bf.proxies.create.mutate({
        project,
        name: values.name || null,
        protocol: values.protocol,
        hostname: values.hostname,
        // The API reads a port as a number or its digits: what was typed is sent, for it to judge.
        port: values.port,
        ...(values.username ? { username: values.username } : {}),
        ...(values.password ? { password: values.password } : {}),
      }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: trpc.proxies.list.queryKey({ project }) });
      onDone();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const error = create.error;
  return (
    <form onSubmit={submit} aria-label="add proxy" noValidate>
      <Stack>
        <TextInput
          label="Name"
          value={values.name}
          onChange={(event) => set('name')(event.currentTarget.value)}
          error={fieldError(error, ['name'])}
        />
        <Select
          label="Protocol"
          data={['http', 'https', 'socks5']}
          value={values.protocol}
          onChange={(value) => set('protocol')(value ?? '')}
          allowDeselect={false}
          error={fieldError(error, ['protocol'])}
        />
        <TextInput
          label="Host"
          value={values.hostname}
          onChange={(event) => set('hostname')(event.currentTarget.value)}
          error={fieldError(error, ['hostname'])}
        />
        <TextInput
          label="Port"
          inputMode="numeric"
          value={values.port}
          onChange={(event) => set('port')(event.currentTarget.value)}
          error={fieldError(error, ['port'])}
        />
        <TextInput
          label="User name"
          autoComplete="off"
          value={values.username}
          onChange={(event) => set('username')(event.currentTarget.value)}
          error={fieldError(error, ['username'])}
        />
        <PasswordInput
          label="Password"
          autoComplete="new-password"
          value={values.password}
          onChange={(event) => set('password')(event.currentTarget.value)}
          error={fieldError(error, ['password'])}
        />
        <FormError error={error} fields={fields} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Add proxy
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
