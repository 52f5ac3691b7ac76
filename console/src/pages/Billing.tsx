import { Alert, Badge, Button, Card, Group, List, SimpleGrid, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { bf, type RouterOutputs } from '../api.ts';
import { DataTable } from '../components/DataTable.tsx';
import { ErrorLine, fieldError, Loaded, when } from '../components/parts.tsx';
import { trpc } from '../trpc.ts';

type Usage = RouterOutputs['billing']['usage'];
type Unit = 'cpu' | 'network' | 'tokens';

const unitNames: Record<Unit, string> = { cpu: 'CPU seconds', network: 'Network', tokens: 'Model tokens' };
/** Minor units as money, with as many decimals as the currency has (2 for USD, 0 for JPY, 3 for KWD). */
function money(minor: string, currency: string) {
  const code = currency.toUpperCase();
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  return `${(Number(minor) / 10 ** digits).toFixed(digits)} ${code}`;
}
const amountOf = (unit: Unit, quantity: string) => {
  const value = Number(quantity);
  if (unit === 'network') {
    for (const [size, name] of [
      [2 ** 30, 'GiB'],
      [2 ** 20, 'MiB'],
      [2 ** 10, 'KiB'],
    ] as const) {
      if (value >= size) return `${(value / size).toFixed(1)} ${name}`;
    }
    return `${value} B`;
  }
  return unit === 'cpu' ? `${value.toFixed(1)} s` : value.toLocaleString();
};

/**
 * Billing (what `/billing` was): the balance, the plan with the others to subscribe to, a top-up,
 * Stripe's portal, and the usage of the last 30 days as a chart by day per kind and a table by
 * session. Stripe's pages are Stripe's: the buttons go to the URLs the API answers, and Stripe
 * sends the user back here.
 */
export function BillingPage({ back }: { back?: string }) {
  const overview = useQuery(trpc.billing.overview.queryOptions());
  const plans = useQuery(trpc.billing.plans.queryOptions());
  const usage = useQuery(trpc.billing.usage.queryOptions({ days: 30 }));
  const go = useMutation({
    mutationFn: async (step: () => Promise<{ url: string }>) => window.location.assign((await step()).url),
  });
  const [amount, setAmount] = useState('');
  return (
    <Loaded query={overview}>
      {({ balances, activeSubscription, billingEnabled }) => {
        const currency = balances[0]?.currency ?? 'usd';
        const topUp = (event: FormEvent) => {
          event.preventDefault();
          go.mutate(() => bf.billing.topUp.mutate({ amount, currency }));
        };
        return (
          <>
            <Title order={1} size="h2" mb="md">
              Billing
            </Title>
            {back && (
              <Alert role="status" color={back.endsWith('done') ? 'green' : 'gray'} mb="md">
                {back.endsWith('done')
                  ? 'Thank you: the payment is on its way and shows here once Stripe confirms it.'
                  : 'Nothing was paid.'}
              </Alert>
            )}
            {!billingEnabled && (
              <Alert color="blue" variant="light" mb="md" title="Billing is off on this service">
                Nothing is charged: there is nothing to top up or subscribe to. Usage is still counted below.
              </Alert>
            )}
            <ErrorLine error={go.error} />
            <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="md">
              {balances.map((balance) => (
                <Card key={balance.currency} withBorder radius="md" component="section" aria-label={`balance in ${balance.currency}`}>
                  <Text size="sm" c="dimmed">
                    Balance
                  </Text>
                  <Title order={2} size="h3">
                    {money(balance.available, balance.currency)}
                  </Title>
                  {balance.pending !== '0' && (
                    <Text size="sm" c="var(--mantine-color-error)">
                      {money(balance.pending, balance.currency)} not covered
                    </Text>
                  )}
                </Card>
              ))}
              <Card withBorder radius="md" component="section" aria-label="plan">
                <Text size="sm" c="dimmed">
                  Plan
                </Text>
                <Title order={2} size="h3">
                  {activeSubscription?.plan?.name ?? 'None'}
                </Title>
                {activeSubscription && (
                  <Text size="sm" c="dimmed">
                    {activeSubscription.status}, renews {when(activeSubscription.currentPeriodEnd)}; left this period:{' '}
                    {(['cpu', 'network', 'tokens'] as const)
                      .map((unit) => `${amountOf(unit, activeSubscription.remaining[unit])} ${unit}`)
                      .join(', ')}
                  </Text>
                )}
              </Card>
            </SimpleGrid>
            {billingEnabled && (
              <Group align="flex-end" gap="sm" mt="md">
                <Group renderRoot={(props) => <form {...props} />} onSubmit={topUp} aria-label="top up" align="flex-end" gap="sm">
                  <TextInput
                    label={`Add funds (${currency.toUpperCase()})`}
                    inputMode="decimal"
                    placeholder="10.00"
                    required
                    value={amount}
                    onChange={(event) => setAmount(event.currentTarget.value)}
                    error={fieldError(go.error, ['amount'])}
                  />
                  <Button type="submit" loading={go.isPending}>
                    Top up
                  </Button>
                </Group>
                <Button variant="default" disabled={go.isPending} onClick={() => go.mutate(() => bf.billing.portal.mutate())}>
                  Invoices and payment methods
                </Button>
              </Group>
            )}
            {billingEnabled && (
              <>
                <Title order={2} size="h3" mt="xl" mb="sm">
                  Plans
                </Title>
                <Loaded query={plans}>
                  {(rows) => (
                    <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="md">
                      {rows.map((plan) => (
                        <Card key={plan.priceId} withBorder radius="md" component="article" aria-label={`plan ${plan.name}`}>
                          <Title order={3} size="h4">
                            {plan.name}
                          </Title>
                          <Text size="sm">
                            {money(plan.monthlyPrice, plan.currency)} a month · {plan.headline}
                          </Text>
                          <List size="sm" my="xs">
                            {plan.features.map((feature) => (
                              <List.Item key={feature}>{feature}</List.Item>
                            ))}
                          </List>
                          {activeSubscription?.plan?.priceId === plan.priceId ? (
                            <Badge variant="dot" color="green">
                              Your plan
                            </Badge>
                          ) : (
                            <Button
                              variant="light"
                              disabled={go.isPending}
                              onClick={() => go.mutate(() => bf.billing.subscribe.mutate({ priceId: plan.priceId }))}
                            >
                              Subscribe to {plan.name}
                            </Button>
                          )}
                        </Card>
                      ))}
                    </SimpleGrid>
                  )}
                </Loaded>
              </>
            )}
            <Title order={2} size="h3" mt="xl" mb="sm">
              Usage, last 30 days
            </Title>
            <Loaded query={usage}>
              {(data) => (
                <>
                  <UsageCharts usage={data} />
                  <UsageBySession usage={data} />
                </>
              )}
            </Loaded>
          </>
        );
      }}
    </Loaded>
  );
}

/** One bar chart per kind of usage (their units differ), a bar per day of the period. */
function UsageCharts({ usage }: { usage: Usage }) {
  const days: string[] = [];
  for (const day = new Date(usage.since); day <= new Date(); day.setUTCDate(day.getUTCDate() + 1))
    days.push(day.toISOString().slice(0, 10));
  const byDay = new Map(usage.days.map((entry) => [entry.day, entry]));
  return (
    <div className="charts">
      {(['cpu', 'network', 'tokens'] as const).map((unit) => {
        const values = days.map((day) => Number(byDay.get(day)?.[unit] ?? 0));
        const top = Math.max(...values, 0);
        const total = values.reduce((sum, value) => sum + value, 0);
        return (
          <figure key={unit} className="chart">
            <Text component="figcaption" size="sm">
              {unitNames[unit]}: {amountOf(unit, String(total))}
            </Text>
            <svg viewBox={`0 0 ${days.length * 10} 60`} role="img" aria-label={`${unitNames[unit]} by day`} preserveAspectRatio="none">
              {values.map((value, index) => {
                const height = top ? (value / top) * 58 : 0;
                return (
                  <rect key={days[index]} x={index * 10 + 1} y={60 - height} width={8} height={height} className={`bar ${unit}`}>
                    <title>{`${days[index]}: ${amountOf(unit, String(value))}`}</title>
                  </rect>
                );
              })}
            </svg>
            <div className="axis">
              <span>{days[0]}</span>
              <span>{days.at(-1)}</span>
            </div>
          </figure>
        );
      })}
    </div>
  );
}

function UsageBySession({ usage }: { usage: Usage }) {
  if (usage.sessions.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No usage in this period: start a browser or run a pipeline, and it is counted here.
      </Text>
    );
  return (
    <DataTable
      label="usage by session"
      rows={usage.sessions}
      rowKey={(entry) => `${entry.project ?? ''}/${entry.session?.id ?? entry.of}`}
      filterBy={(entry) => `${entry.project ?? ''} ${entry.session?.name ?? entry.of}`}
      columns={[
        { key: 'project', label: 'Project', sortBy: (entry) => entry.project ?? '', render: (entry) => entry.project ?? 'deleted' },
        {
          key: 'session',
          label: 'Session',
          sortBy: (entry) => entry.session?.name ?? entry.of,
          render: (entry) => entry.session?.name ?? entry.of,
        },
        { key: 'cpu', label: 'CPU', sortBy: (entry) => Number(entry.cpu), render: (entry) => amountOf('cpu', entry.cpu) },
        {
          key: 'network',
          label: 'Network',
          sortBy: (entry) => Number(entry.network),
          render: (entry) => amountOf('network', entry.network),
        },
        {
          key: 'tokens',
          label: 'Model tokens',
          sortBy: (entry) => Number(entry.tokens),
          render: (entry) => amountOf('tokens', entry.tokens),
        },
        { key: 'billed', label: 'Billed', sortBy: (entry) => Number(entry.billed), render: (entry) => money(entry.billed, usage.currency) },
      ]}
    />
  );
}
