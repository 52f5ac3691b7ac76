import { Button, type ButtonProps, CopyButton, Group, Modal, Stack, Text, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { type ReactNode, useState } from 'react';
import { useProjectAccess } from '../access.tsx';

/**
 * A button for what cannot be undone: it asks first, in a dialog that says what will happen,
 * with the answer `yes` and Cancel. Turned off, saying why, in a project the user may only read.
 */
export function ConfirmAction({
  children,
  title,
  question,
  yes,
  onConfirm,
  loading,
  ...button
}: {
  children: ReactNode;
  title: string;
  question: ReactNode;
  yes: string;
  onConfirm: () => void;
  loading?: boolean;
} & Omit<ButtonProps, 'children'> & { 'aria-label'?: string; leftSection?: ReactNode }) {
  const [open, setOpen] = useState(false);
  const access = useProjectAccess();
  return (
    <>
      <Button
        {...button}
        loading={loading}
        disabled={access.readOnly || button.disabled}
        title={access.readOnly ? access.why : undefined}
        onClick={() => setOpen(true)}
      >
        {children}
      </Button>
      <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={open} onClose={() => setOpen(false)} title={title}>
        <Stack>
          <Text size="sm">{question}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Cancel
            </Button>
            <Button
              color="red"
              data-autofocus
              onClick={() => {
                setOpen(false);
                onConfirm();
              }}
            >
              {yes}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

/** A secret shown once: its value with a copy button, and the warning that it is not shown again. */
export function SecretOnce({ label, value, onDismiss }: { label: string; value: string; onDismiss: () => void }) {
  return (
    <Stack gap="xs" role="status" aria-label={label}>
      <Text size="sm">{label}: copy it now, it is not shown again.</Text>
      <Group gap="xs" wrap="nowrap">
        <Text component="output" ff="monospace" size="sm" style={{ overflowWrap: 'anywhere' }} aria-label={`${label} value`}>
          {value}
        </Text>
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? 'Copied' : 'Copy'}>
              <Button size="xs" variant="light" onClick={copy} leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            </Tooltip>
          )}
        </CopyButton>
      </Group>
      <Group>
        <Button size="xs" variant="default" onClick={onDismiss}>
          I have copied it
        </Button>
      </Group>
    </Stack>
  );
}
