import { Alert, Anchor, Box, Button, Card, Code, Group, List, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import qrcode from 'qrcode-generator';
import { useState } from 'react';
import { bf } from '../api.ts';
import { PasswordChange } from '../components/PasswordChange.tsx';
import { ErrorLine, Loaded } from '../components/parts.tsx';
import { trpc } from '../trpc.ts';

/** The password, two-factor sign-in and its recovery codes, and the external accounts linked to this one. */
export function AccountPage() {
  return (
    <Stack gap="xl">
      <Title order={1} size="h2">
        Account
      </Title>
      <PasswordChange />
      <TwoFactor />
      <ExternalAccounts />
    </Stack>
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
    <Alert color="yellow" role="status" mb="sm">
      <Text size="sm" mb="xs">
        Your recovery codes, shown only now: each signs in once without the app. Keep them somewhere safe.
      </Text>
      <List type="ordered" aria-label="recovery codes" className="codes" size="sm">
        {codes.map((code) => (
          <List.Item key={code}>
            <Code>{code}</Code>
          </List.Item>
        ))}
      </List>
    </Alert>
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
    <TextInput
      label={`A current code of your authenticator app${status.data?.enabled ? ' (or, to turn it off, a recovery code)' : ''}`}
      autoComplete="one-time-code"
      inputMode="numeric"
      value={code}
      onChange={(event) => setCode(event.currentTarget.value)}
      maw={360}
    />
  );
  return (
    <Card withBorder radius="md" component="section" aria-label="two-factor sign-in">
      <Title order={2} size="h3" mb="xs">
        Two-factor sign-in
      </Title>
      <ErrorLine error={setup.error ?? enable.error ?? regenerate.error ?? disable.error} />
      {codes && <RecoveryCodes codes={codes} />}
      <Loaded query={status}>
        {({ enabled, recoveryCodesRemaining }) => (
          <>
            {!enabled && !setup.data && (
              <Stack gap="sm" align="flex-start">
                <Text size="sm">Off. With it on, signing in also asks for a code of an authenticator app.</Text>
                <Button onClick={() => setup.mutate()} loading={setup.isPending}>
                  Turn on two-factor sign-in
                </Button>
              </Stack>
            )}
            {setup.data && (
              <Stack gap="sm" align="flex-start">
                <Text size="sm">Scan this with your authenticator app (or type the secret), then enter the code it shows.</Text>
                <QrCode text={setup.data.url} />
                <Box maw="100%">
                  <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                    Secret:{' '}
                    <Code component="output" aria-label="authenticator secret" style={{ overflowWrap: 'anywhere' }}>
                      {setup.data.secret}
                    </Code>
                  </Text>
                </Box>
                {codeField}
                <Button onClick={() => enable.mutate()} loading={enable.isPending} disabled={!code}>
                  Confirm and turn on
                </Button>
              </Stack>
            )}
            {enabled && (
              <Stack gap="sm" align="flex-start">
                <Text size="sm">On. {recoveryCodesRemaining} recovery codes left.</Text>
                {codeField}
                <Group gap="sm">
                  <Button variant="default" onClick={() => regenerate.mutate()} loading={regenerate.isPending} disabled={!code}>
                    New recovery codes
                  </Button>
                  <Button color="red" variant="light" onClick={() => disable.mutate()} loading={disable.isPending} disabled={!code}>
                    Turn off
                  </Button>
                </Group>
              </Stack>
            )}
          </>
        )}
      </Loaded>
    </Card>
  );
}

/** Each configured OpenID Connect provider: linked or not, with the link (through the provider) or unlink. */
function ExternalAccounts() {
  const providers = useQuery(trpc.externalAuth.providers.queryOptions());
  return (
    <Card withBorder radius="md" component="section" aria-label="linked accounts">
      <Title order={2} size="h3" mb="xs">
        Linked accounts
      </Title>
      <Loaded query={providers}>
        {(names) =>
          names.length === 0 ? (
            <Text size="sm" c="dimmed">
              No external sign-in providers are configured on this service.
            </Text>
          ) : (
            names.map((name) => <Provider key={name} name={name} />)
          )
        }
      </Loaded>
    </Card>
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
    <Group component="section" aria-label={`provider ${name}`} gap="sm" py="xs" wrap="wrap">
      <Text fw={600}>{name}</Text>
      <Loaded query={linked}>
        {({ linked: isLinked, email }) =>
          isLinked ? (
            <>
              <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                linked{email ? ` as ${email}` : ''}
              </Text>
              <Button size="xs" variant="default" onClick={() => unlink.mutate()} loading={unlink.isPending}>
                Unlink
              </Button>
            </>
          ) : (
            <Anchor href={link} size="sm">
              Link your {name} account
            </Anchor>
          )
        }
      </Loaded>
      <ErrorLine error={unlink.error} />
    </Group>
  );
}
