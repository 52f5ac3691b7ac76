import { Alert, Button, Group, PasswordInput, Stack, Title } from '@mantine/core';
import { IconCheck } from '@tabler/icons-react';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { bf } from '../api.ts';
import { FormError, fieldError } from './FormErrors.tsx';

/**
 * Change the password (POST /api/auth/password): the current one, the new one twice. Every other
 * session of the account ends; this one stays. An account made through a provider has no current
 * password: left empty, it is not sent, and the new one is set.
 */
export function PasswordChange() {
  const [currentPassword, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [confirmPassword, setConfirm] = useState('');
  const change = useMutation({
    mutationFn: () => bf.password.change.mutate({ ...(currentPassword ? { currentPassword } : {}), password, confirmPassword }),
    onSuccess: () => {
      setCurrent('');
      setPassword('');
      setConfirm('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate();
  };
  return (
    <section aria-label="password">
      <Title order={2}>Password</Title>
      <form onSubmit={submit} aria-label="change password" noValidate>
        <Stack maw={420} mt="sm">
          <PasswordInput
            label="Current password"
            autoComplete="current-password"
            value={currentPassword}
            onChange={(event) => setCurrent(event.currentTarget.value)}
            error={fieldError(change.error, ['currentPassword'])}
          />
          <PasswordInput
            label="New password"
            placeholder="At least 8 characters"
            autoComplete="new-password"
            value={password}
            onChange={(event) => setPassword(event.currentTarget.value)}
            error={fieldError(change.error, ['password'])}
          />
          <PasswordInput
            label="New password again"
            autoComplete="new-password"
            value={confirmPassword}
            onChange={(event) => setConfirm(event.currentTarget.value)}
            error={fieldError(change.error, ['confirmPassword'])}
          />
          <FormError error={change.error} fields={['currentPassword', 'password', 'confirmPassword']} />
          {change.isSuccess && (
            <Alert color="green" variant="light" icon={<IconCheck size={18} />} role="status">
              Password changed. Your other sessions are signed out; this one stays.
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={change.isPending}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </section>
  );
}
