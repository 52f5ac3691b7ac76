import { Alert, Badge, Button, Group, Modal, MultiSelect, Paper, Skeleton, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { IconPlus, IconRefresh, IconSend, IconTrash, IconWebhook } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useProjectAccess } from '../../access.tsx';
import { bf, type RouterInputs, type RouterOutputs } from '../../api.ts';
import { ConfirmAction, SecretOnce } from '../../components/ConfirmAction.tsx';
import { FormError, fieldError } from '../../components/FormErrors.tsx';
import { trpc } from '../../trpc.ts';

type Webhook = RouterOutputs['webhooks']['list'][number];
type Delivery = RouterOutputs['webhooks']['deliveries'][number];
type WebhookEvent = RouterInputs['webhooks']['create']['events'][number];

/** The events an endpoint may want (docs/webhooks.md), each once; the compiler checks the list is the API's. */
const events = [
  'run.finished',
  'function.finished',
  'analysis.finished',
  'generation.finished',
  'session.stopped',
  'funds.low',
  'funds.exhausted',
] as const satisfies readonly WebhookEvent[];
const everyEventListed: Exclude<WebhookEvent, (typeof events)[number]> extends never ? true : false = true;
void everyEventListed;

/** Webhooks: the project's endpoints, each with its events, secret rotation, deletion and delivery log. */
export function WebhooksPage({ project }: { project: string }) {
  const webhooks = useQuery(trpc.webhooks.list.queryOptions({ project, limit: 200 }));
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const access = useProjectAccess();
  const createButton = (
    <Button
      leftSection={<IconPlus size={16} />}
      onClick={() => setCreating(true)}
      disabled={access.readOnly}
      title={access.readOnly ? access.why : undefined}
    >
      Add webhook
    </Button>
  );
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Webhooks</Title>
        {webhooks.data && webhooks.data.length > 0 && createButton}
      </Group>
      <Text size="sm">
        The service POSTs each event an endpoint wants to its URL, signed with the endpoint's secret (Standard Webhooks).
      </Text>
      {secret && (
        <Alert color="green" variant="light">
          <SecretOnce label={secret.label} value={secret.value} onDismiss={() => setSecret(null)} />
        </Alert>
      )}
      {webhooks.isError && <FormError error={webhooks.error} fields={[]} title="The webhooks could not be read" />}
      {!webhooks.data && !webhooks.isError && <Skeleton height={80} />}
      {webhooks.data?.length === 0 && (
        <Alert variant="light" color="gray" icon={<IconWebhook size={18} />} title="No webhooks yet">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">Add an endpoint to hear when runs, functions or sessions finish.</Text>
            {createButton}
          </Stack>
        </Alert>
      )}
      {webhooks.data?.map((webhook) => (
        <WebhookCard key={webhook.id} project={project} webhook={webhook} onSecret={setSecret} />
      ))}
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={creating}
        onClose={() => setCreating(false)}
        title="Add webhook"
        size="lg"
      >
        {creating && (
          <CreateWebhookForm
            project={project}
            onCreated={(value) => {
              setCreating(false);
              setSecret({ label: 'The new webhook’s signing secret', value });
            }}
            onCancel={() => setCreating(false)}
          />
        )}
      </Modal>
    </Stack>
  );
}

function CreateWebhookForm({
  project,
  onCreated,
  onCancel,
}: {
  project: string;
  onCreated: (secret: string) => void;
  onCancel: () => void;
}) {
  const queries = useQueryClient();
  const [url, setUrl] = useState('');
  const [chosen, setChosen] = useState<string[]>(['run.finished']);
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: () => bf.webhooks.create.mutate({ project, url, events: chosen as WebhookEvent[], description: description || null }),
    onSuccess: async (created) => {
      await queries.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ project }) });
      onCreated(created.secret);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="add webhook" noValidate>
      <Stack>
        <TextInput
          label="URL"
          placeholder="https://example.com/hooks/browserflow"
          value={url}
          onChange={(event) => setUrl(event.currentTarget.value)}
          error={fieldError(create.error, ['url'])}
        />
        <MultiSelect label="Events" data={[...events]} value={chosen} onChange={setChosen} error={fieldError(create.error, ['events'])} />
        <TextInput
          label="Description"
          value={description}
          onChange={(event) => setDescription(event.currentTarget.value)}
          error={fieldError(create.error, ['description'])}
        />
        <FormError error={create.error} fields={['url', 'events', 'description']} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Add webhook
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function WebhookCard({
  project,
  webhook,
  onSecret,
}: {
  project: string;
  webhook: Webhook;
  onSecret: (secret: { label: string; value: string }) => void;
}) {
  const queries = useQueryClient();
  const [showLog, setShowLog] = useState(false);
  const rotate = useMutation({
    mutationFn: () => bf.webhooks.rotateSecret.mutate({ project, webhookId: webhook.id }),
    onSuccess: (answer) => onSecret({ label: `The new signing secret of ${webhook.url}`, value: answer.secret }),
  });
  const remove = useMutation({
    mutationFn: () => bf.webhooks.delete.mutate({ project, webhookId: webhook.id }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ project }) }),
  });
  return (
    <Paper withBorder p="md" aria-label={`webhook ${webhook.url}`} component="article">
      <Stack gap="xs">
        <Group justify="space-between" wrap="wrap">
          <Text fw={500} style={{ overflowWrap: 'anywhere' }}>
            {webhook.url}
          </Text>
          <Badge variant="dot" color={webhook.enabled ? 'green' : 'gray'}>
            {webhook.enabled ? 'enabled' : 'disabled'}
          </Badge>
        </Group>
        {webhook.description && <Text size="sm">{webhook.description}</Text>}
        <Group gap={4}>
          {webhook.events.map((name) => (
            <Badge key={name} variant="default">
              {name}
            </Badge>
          ))}
        </Group>
        <Group gap="xs">
          <Button size="xs" variant="default" onClick={() => setShowLog(!showLog)} aria-expanded={showLog}>
            {showLog ? 'Hide deliveries' : 'Deliveries'}
          </Button>
          <ConfirmAction
            size="xs"
            variant="default"
            leftSection={<IconRefresh size={14} />}
            title="Rotate the signing secret?"
            question="Deliveries from now on are signed with a new secret; the receiver must be given it, or it will refuse them."
            yes="Rotate secret"
            loading={rotate.isPending}
            onConfirm={() => rotate.mutate()}
          >
            Rotate secret
          </ConfirmAction>
          <ConfirmAction
            size="xs"
            color="red"
            variant="default"
            leftSection={<IconTrash size={14} />}
            title="Delete this webhook?"
            question={`${webhook.url} hears nothing more, and its delivery log goes with it.`}
            yes="Delete webhook"
            loading={remove.isPending}
            onConfirm={() => remove.mutate()}
          >
            Delete
          </ConfirmAction>
        </Group>
        <FormError error={rotate.error ?? remove.error} fields={[]} />
        {showLog && <DeliveryLog project={project} webhookId={webhook.id} />}
      </Stack>
    </Paper>
  );
}

const statusColor = { pending: 'yellow', succeeded: 'green', failed: 'red' } as const;

function DeliveryLog({ project, webhookId }: { project: string; webhookId: string }) {
  const deliveries = useQuery(
    trpc.webhooks.deliveries.queryOptions(
      { project, webhookId, limit: 50 },
      // While one is on its way, its tries and status change: look again.
      { refetchInterval: (query) => (query.state.data?.some((delivery) => delivery.status === 'pending') ? 1500 : false) },
    ),
  );
  if (deliveries.isError) return <FormError error={deliveries.error} fields={[]} title="The delivery log could not be read" />;
  if (!deliveries.data) return <Skeleton height={60} />;
  if (deliveries.data.length === 0) {
    return <Text size="sm">No deliveries yet: one is made when an event this endpoint wants happens in the project.</Text>;
  }
  return (
    <Table.ScrollContainer minWidth={480}>
      <Table aria-label="deliveries" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Event</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Tries</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {deliveries.data.map((delivery) => (
            <DeliveryRow key={delivery.id} project={project} webhookId={webhookId} delivery={delivery} />
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

function DeliveryRow({ project, webhookId, delivery }: { project: string; webhookId: string; delivery: Delivery }) {
  const queries = useQueryClient();
  const access = useProjectAccess();
  const resend = useMutation({
    mutationFn: () => bf.webhooks.resend.mutate({ project, webhookId, deliveryId: delivery.id }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.webhooks.deliveries.queryKey({ project, webhookId }) }),
  });
  const last = delivery.attempts.at(-1);
  return (
    <Table.Tr aria-label={`delivery ${delivery.id}`}>
      <Table.Td>
        {delivery.event}
        {delivery.resentFrom && (
          <Text span size="xs">
            {' '}
            (resent)
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Badge variant="dot" color={statusColor[delivery.status]}>
          {delivery.queued ? 'queued' : delivery.status}
        </Badge>
      </Table.Td>
      <Table.Td>
        {delivery.attempts.length}
        {last && (
          <Text span size="xs">
            {' '}
            · last {last.statusCode ?? last.error ?? 'no answer'}
          </Text>
        )}
        {delivery.failure && (
          <Text size="xs" c="red">
            {delivery.failure}
          </Text>
        )}
      </Table.Td>
      <Table.Td>{new Date(delivery.created).toLocaleString()}</Table.Td>
      <Table.Td>
        <Button
          size="xs"
          variant="subtle"
          leftSection={<IconSend size={14} />}
          loading={resend.isPending}
          disabled={access.readOnly}
          onClick={() => resend.mutate()}
        >
          Resend
        </Button>
        {resend.error && (
          <Text size="xs" c="red" role="alert">
            {resend.error.message}
          </Text>
        )}
      </Table.Td>
    </Table.Tr>
  );
}
