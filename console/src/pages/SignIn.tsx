import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { bf } from '../api.ts';
import { ErrorLine } from '../components/parts.tsx';
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
    <main className="narrow page">
      <h1>{mode === 'sign-in' ? 'Sign in to Browserflow' : mode === 'register' ? 'Create an account' : 'Reset your password'}</h1>
      <form onSubmit={submit} className="stack">
        {mode === 'register' && (
          <>
            <label>
              First name
              <input autoComplete="given-name" required value={firstName} onChange={(event) => setFirstName(event.target.value)} />
            </label>
            <label>
              Last name
              <input autoComplete="family-name" required value={lastName} onChange={(event) => setLastName(event.target.value)} />
            </label>
          </>
        )}
        <label>
          E-mail
          <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        {mode !== 'reset' && (
          <label>
            Password
            <input
              type="password"
              autoComplete={mode === 'register' ? 'new-password' : 'current-password'}
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          </label>
        )}
        {mode === 'sign-in' && (
          <label className="inline">
            <input type="checkbox" checked={remember} onChange={(event) => setRemember(event.target.checked)} /> Keep me signed in for 30
            days
          </label>
        )}
        <button type="submit" disabled={action.isPending}>
          {mode === 'sign-in' ? 'Sign in' : mode === 'register' ? 'Register' : 'Mail me a reset link'}
        </button>
        {reset.isSuccess && <p role="status">If {email} has an account, a reset link is on its way.</p>}
        <ErrorLine error={action.error} />
      </form>
      {mode === 'sign-in' && <ProviderButtons />}
      <p className="muted">
        {mode !== 'sign-in' && (
          <button type="button" className="link" onClick={switchTo('sign-in')}>
            Sign in
          </button>
        )}
        {mode !== 'register' && (
          <button type="button" className="link" onClick={switchTo('register')}>
            Create an account
          </button>
        )}
        {mode !== 'reset' && (
          <button type="button" className="link" onClick={switchTo('reset')}>
            Forgot the password?
          </button>
        )}
      </p>
    </main>
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
    <main className="narrow page">
      <h1>Two-factor authentication</h1>
      <form
        className="stack"
        onSubmit={(event) => {
          event.preventDefault();
          verify.mutate();
        }}
      >
        <label>
          A code of your authenticator app, or a recovery code
          <input autoComplete="one-time-code" required value={token} onChange={(event) => setToken(event.target.value)} />
        </label>
        <button type="submit" disabled={verify.isPending}>
          Verify
        </button>
        <ErrorLine error={verify.error} />
      </form>
    </main>
  );
}

/** Signed in with an address not yet verified: the mail's link verifies it; this sends another. */
export function VerifyEmail({ email }: { email: string }) {
  const resend = useMutation({ mutationFn: () => bf.auth.verifyRequest.mutate({ returnUrl: `${window.location.origin}/` }) });
  return (
    <main className="narrow page">
      <h1>Verify your e-mail address</h1>
      <p>We sent a link to {email}. Open it to verify the address, then reload this page.</p>
      <button type="button" onClick={() => resend.mutate()} disabled={resend.isPending || resend.isSuccess}>
        {resend.isSuccess ? 'Sent' : 'Send the link again'}
      </button>
      <ErrorLine error={resend.error} />
    </main>
  );
}

/** Signing in with each configured OpenID Connect provider: the service's redirect flow, back to the console. */
function ProviderButtons() {
  const providers = useQuery(trpc.externalAuth.providers.queryOptions());
  if (!providers.data?.length) return null;
  return (
    <p className="row">
      {providers.data.map((name) => (
        <a key={name} className="button" href={`/api/auth/external/${encodeURIComponent(name)}/init?returnUrl=${encodeURIComponent('/')}`}>
          Sign in with {name}
        </a>
      ))}
    </p>
  );
}
