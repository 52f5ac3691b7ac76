import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import qrcode from 'qrcode-generator';
import { useState } from 'react';
import { bf } from '../api.ts';
import { PasswordChange } from '../components/PasswordChange.tsx';
import { ErrorLine, Loaded } from '../components/parts.tsx';
import { trpc } from '../trpc.ts';

/** Two-factor sign-in and its recovery codes, and the external accounts linked to this one. */
export function AccountPage() {
  return (
    <>
      <h1>Account</h1>
      <PasswordChange />
      <TwoFactor />
      <ExternalAccounts />
    </>
  );
}

/** The authenticator app's enrolment as a picture to scan: the otpauth URL as a QR code. */
function QrCode({ text }: { text: string }) {
  const code = qrcode(0, 'M');
  code.addData(text);
  code.make();
  return <img className="qr" src={code.createDataURL(5, 2)} alt="QR code for the authenticator app" />;
}

function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
    <div className="notice" role="status">
      <p>Your recovery codes, shown only now: each signs in once without the app. Keep them somewhere safe.</p>
      <ol aria-label="recovery codes" className="codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
    </div>
  );
}

function TwoFactor() {
  const queries = useQueryClient();
  const status = useQuery(trpc.twoFactor.status.queryOptions());
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const refresh = () => queries.invalidateQueries({ queryKey: trpc.twoFactor.status.queryKey() });
  const setup = useMutation({ mutationFn: () => bf.twoFactor.enableRequest.mutate() });
  const enable = useMutation({
    mutationFn: () => bf.twoFactor.enableSubmit.mutate({ token: code }),
    onSuccess: (answer) => {
      setCodes(answer.recoveryCodes);
      setCode('');
      setup.reset();
      return refresh();
    },
  });
  const regenerate = useMutation({
    mutationFn: () => bf.twoFactor.regenerateRecoveryCodes.mutate({ token: code }),
    onSuccess: (answer) => {
      setCodes(answer.recoveryCodes);
      setCode('');
      return refresh();
    },
  });
  const disable = useMutation({
    mutationFn: () => bf.twoFactor.reset.mutate({ token: code }),
    onSuccess: () => {
      setCodes(null);
      setCode('');
      return refresh();
    },
  });
  const codeField = (
    <label>
      A current code of your authenticator app{status.data?.enabled ? ' (or, to turn it off, a recovery code)' : ''}
      <input autoComplete="one-time-code" inputMode="numeric" value={code} onChange={(event) => setCode(event.target.value)} />
    </label>
  );
  return (
    <section aria-label="two-factor sign-in">
      <h2>Two-factor sign-in</h2>
      <ErrorLine error={setup.error ?? enable.error ?? regenerate.error ?? disable.error} />
      {codes && <RecoveryCodes codes={codes} />}
      <Loaded query={status}>
        {({ enabled, recoveryCodesRemaining }) => (
          <>
            {!enabled && !setup.data && (
              <>
                <p>Off. With it on, signing in also asks for a code of an authenticator app.</p>
                <button type="button" onClick={() => setup.mutate()} disabled={setup.isPending}>
                  Turn on two-factor sign-in
                </button>
              </>
            )}
            {setup.data && (
              <div className="stack">
                <p>Scan this with your authenticator app (or type the secret), then enter the code it shows.</p>
                <QrCode text={setup.data.url} />
                <p>
                  Secret: <output aria-label="authenticator secret">{setup.data.secret}</output>
                </p>
                {codeField}
                <button type="button" onClick={() => enable.mutate()} disabled={enable.isPending || !code}>
                  Confirm and turn on
                </button>
              </div>
            )}
            {enabled && (
              <div className="stack">
                <p>On. {recoveryCodesRemaining} recovery codes left.</p>
                {codeField}
                <div className="row">
                  <button type="button" onClick={() => regenerate.mutate()} disabled={regenerate.isPending || !code}>
                    New recovery codes
                  </button>
                  <button type="button" onClick={() => disable.mutate()} disabled={disable.isPending || !code}>
                    Turn off
                  </button>
                </div>
              </div>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

/** Each configured OpenID Connect provider: linked or not, with the link (through the provider) or unlink. */
function ExternalAccounts() {
  const providers = useQuery(trpc.externalAuth.providers.queryOptions());
  return (
    <section aria-label="linked accounts">
      <h2>Linked accounts</h2>
      <Loaded query={providers}>
        {(names) =>
          names.length === 0 ? (
            <p className="muted">No external sign-in providers are configured on this service.</p>
          ) : (
            names.map((name) => <Provider key={name} name={name} />)
          )
        }
      </Loaded>
    </section>
  );
}

function Provider({ name }: { name: string }) {
  const queries = useQueryClient();
  const linked = useQuery(trpc.externalAuth.get.queryOptions({ provider: name }));
  const unlink = useMutation({
    mutationFn: () => bf.externalAuth.unlink.mutate({ provider: name }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.externalAuth.get.queryKey({ provider: name }) }),
  });
  const link = `/api/auth/external/${encodeURIComponent(name)}/init?returnUrl=${encodeURIComponent('/#/account')}`;
  return (
    <section className="row card" aria-label={`provider ${name}`}>
      <strong>{name}</strong>
      <Loaded query={linked}>
        {({ linked: isLinked, email }) =>
          isLinked ? (
            <>
              <span>linked{email ? ` as ${email}` : ''}</span>
              <button type="button" onClick={() => unlink.mutate()} disabled={unlink.isPending}>
                Unlink
              </button>
            </>
          ) : (
            <a href={link}>Link your {name} account</a>
          )
        }
      </Loaded>
      <ErrorLine error={unlink.error} />
    </section>
  );
}
