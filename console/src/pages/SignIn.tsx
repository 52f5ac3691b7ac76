import { Box, Button, Checkbox, Group, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { bf } from '../api.ts';
import { ErrorLine, fieldError } from '../components/parts.tsx';
import { trpc } from '../trpc.ts';

type Mode = 'sign-in' | 'register' | 'reset';

/**
 * Signing in, registering and asking for a reset mail, on one page. A sign-in or registration
 * answer sets the session cookie; the console then reads who is in. The links in the mails lead to
 * the service's own pages (`/auth/verify`, `/auth/reset`), which come back here.
 */
export function SignIn() {
  const queries = useQueryClient();
  const [mode, setMode] = useState<Mode>('sign-in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [remember, setRemember] = useState(false);
  const signedIn = () => queries.invalidateQueries({ queryKey: trpc.auth.status.queryKey() });
  const signIn = useMutation({ mutationFn: () => bf.auth.login.mutate({ email, password, remember }), onSuccess: signedIn });
  const register = useMutation({
    mutationFn: () => bf.auth.register.mutate({ email, password, firstName, lastName }),
    onSuccess: signedIn,
  });
  const reset = useMutation({ mutationFn: () => bf.auth.resetRequest.mutate({ email, returnUrl: `${window.location.origin}/` }) });
  const action = mode === 'sign-in' ? signIn : mode === 'register' ? register : reset;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    action.mutate();
  };
  const switchTo = (next: Mode) => () => {
    for (const mutation of [signIn, register, reset]) mutation.reset();
    setMode(next);
  };
  return (
    <Narrow>
      <Title order={1} size="h2" mb="md">
        {mode === 'sign-in' ? 'Sign in to Browserflow' : mode === 'register' ? 'Create an account' : 'Reset your password'}
      </Title>
      <Paper withBorder p="lg" radius="md">
        <Stack renderRoot={(props) => <form {...props} />} onSubmit={submit} gap="sm">
          {mode === 'register' && (
            <>
              <TextInput
                label="First name"
                autoComplete="given-name"
                required
                value={firstName}
                onChange={(event) => setFirstName(event.currentTarget.value)}
                error={fieldError(action.error, ['firstName'])}
              />
              <TextInput
                label="Last name"
                autoComplete="family-name"
                required
                value={lastName}
                onChange={(event) => setLastName(event.currentTarget.value)}
                error={fieldError(action.error, ['lastName'])}
              />
            </>
          )}
          <TextInput
            label="E-mail"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(event) => setEmail(event.currentTarget.value)}
            error={fieldError(action.error, ['email'])}
          />
          {mode !== 'reset' && (
            <PasswordInput
              label="Password"
              autoComplete={mode === 'register' ? 'new-password' : 'current-password'}
              required
              value={password}
              onChange={(event) => setPassword(event.currentTarget.value)}
              error={fieldError(action.error, ['password'])}
              description={mode === 'register' ? 'At least 8 characters.' : undefined}
            />
          )}
          {mode === 'sign-in' && (
            <Checkbox
              label="Keep me signed in for 30 days"
              checked={remember}
              onChange={(event) => setRemember(event.currentTarget.checked)}
            />
          )}
          <Button type="submit" loading={action.isPending}>
            {mode === 'sign-in' ? 'Sign in' : mode === 'register' ? 'Register' : 'Mail me a reset link'}
          </Button>
          {reset.isSuccess && <Text role="status">If {email} has an account, a reset link is on its way.</Text>}
          <ErrorLine error={action.error} />
        </Stack>
        {mode === 'sign-in' && <ProviderButtons />}
      </Paper>
      <Group gap="md" mt="md">
        {mode !== 'sign-in' && (
          <Button variant="subtle" size="compact-sm" onClick={switchTo('sign-in')}>
            Sign in
          </Button>
        )}
        {mode !== 'register' && (
          <Button variant="subtle" size="compact-sm" onClick={switchTo('register')}>
            Create an account
          </Button>
        )}
        {mode !== 'reset' && (
          <Button variant="subtle" size="compact-sm" onClick={switchTo('reset')}>
            Forgot the password?
          </Button>
        )}
      </Group>
    </Narrow>
  );
}

/** The second step of a sign-in with 2FA: a code of the authenticator app, or a recovery code. */
export function SecondFactor() {
  const queries = useQueryClient();
  const [token, setToken] = useState('');
  const verify = useMutation({
    mutationFn: () => bf.twoFactor.verify.mutate({ token }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.auth.status.queryKey() }),
  });
  return (
    <Narrow>
      <Title order={1} size="h2" mb="md">
        Two-factor authentication
      </Title>
      <Paper withBorder p="lg" radius="md">
        <Stack
          renderRoot={(props) => <form {...props} />}
          gap="sm"
          onSubmit={(event) => {
            event.preventDefault();
            verify.mutate();
          }}
        >
          <TextInput
            label="A code of your authenticator app, or a recovery code"
            autoComplete="one-time-code"
            required
            value={token}
            onChange={(event) => setToken(event.currentTarget.value)}
            error={fieldError(verify.error, ['token'])}
          />
          <Button type="submit" loading={verify.isPending}>
            Verify
          </Button>
          <ErrorLine error={verify.error} />
        </Stack>
      </Paper>
    </Narrow>
  );
}

/** Signed in with an address not yet verified: the mail's link verifies it; this sends another. */
export function VerifyEmail({ email }: { email: string }) {
  const queries = useQueryClient();
  // Verified in another tab (the mail's link): this one notices when it is looked at again.
  useQuery({ ...trpc.auth.status.queryOptions(), refetchOnWindowFocus: true, refetchInterval: 5000 });
  const resend = useMutation({ mutationFn: () => bf.auth.verifyRequest.mutate({ returnUrl: `${window.location.origin}/` }) });
  return (
    <Narrow>
      <Title order={1} size="h2" mb="md">
        Verify your e-mail address
      </Title>
      <Paper withBorder p="lg" radius="md">
        <Text>We sent a link to {email}. Open it to verify the address; this page then goes on by itself.</Text>
        <Group mt="md">
          <Button variant="default" onClick={() => resend.mutate()} disabled={resend.isPending || resend.isSuccess}>
            {resend.isSuccess ? 'Sent' : 'Send the link again'}
          </Button>
          <Button onClick={() => queries.invalidateQueries({ queryKey: trpc.auth.status.queryKey() })}>I have verified it: continue</Button>
        </Group>
        <ErrorLine error={resend.error} />
      </Paper>
    </Narrow>
  );
}

/** Signing in with each configured OpenID Connect provider: the service's redirect flow, back to the console. */
function ProviderButtons() {
  const providers = useQuery(trpc.externalAuth.providers.queryOptions());
  if (!providers.data?.length) return null;
  return (
    <Group mt="md">
      {providers.data.map((name) => (
        <Button
          key={name}
          component="a"
          variant="default"
          href={`/api/auth/external/${encodeURIComponent(name)}/init?returnUrl=${encodeURIComponent('/')}`}
        >
          Sign in with {name}
        </Button>
      ))}
    </Group>
  );
}

/** The signed-out pages' column: narrow, in the middle, a phone's width at most. */
function Narrow({ children }: { children: ReactNode }) {
  return (
    <Box component="main" maw={440} mx="auto" px="md" py={48}>
      {children}
    </Box>
  );
}
