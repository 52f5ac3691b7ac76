import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { bf, type RouterOutputs } from '../api.ts';
import { ErrorLine, Loaded, when } from '../components/parts.tsx';
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
            <h1>Billing</h1>
            {back && (
              <p role="status" className="notice">
                {back.endsWith('done')
                  ? 'Thank you: the payment is on its way and shows here once Stripe confirms it.'
                  : 'Nothing was paid.'}
              </p>
            )}
            {!billingEnabled && <p className="muted">Billing is off on this service: nothing is charged.</p>}
            <ErrorLine error={go.error} />
            <div className="row">
              {balances.map((balance) => (
                <section key={balance.currency} className="card" aria-label={`balance in ${balance.currency}`}>
                  <span className="muted">Balance</span>
                  <h2>{money(balance.available, balance.currency)}</h2>
                  {balance.pending !== '0' && <span className="error">{money(balance.pending, balance.currency)} not covered</span>}
                </section>
              ))}
              <section className="card" aria-label="plan">
                <span className="muted">Plan</span>
                <h2>{activeSubscription?.plan?.name ?? 'None'}</h2>
                {activeSubscription && (
                  <span className="muted">
                    {activeSubscription.status}, renews {when(activeSubscription.currentPeriodEnd)}; left this period:{' '}
                    {(['cpu', 'network', 'tokens'] as const)
                      .map((unit) => `${amountOf(unit, activeSubscription.remaining[unit])} ${unit}`)
                      .join(', ')}
                  </span>
                )}
              </section>
            </div>
            <section className="row">
              <form onSubmit={topUp} className="row" aria-label="top up">
                <label>
                  Add funds ({currency.toUpperCase()})
                  <input
                    inputMode="decimal"
                    placeholder="10.00"
                    required
                    value={amount}
                    onChange={(event) => setAmount(event.target.value)}
                  />
                </label>
                <button type="submit" disabled={go.isPending}>
                  Top up
                </button>
              </form>
              <button type="button" disabled={go.isPending} onClick={() => go.mutate(() => bf.billing.portal.mutate())}>
                Invoices and payment methods
              </button>
            </section>
            <h2>Plans</h2>
            <Loaded query={plans}>
              {(rows) => (
                <div className="row">
                  {rows.map((plan) => (
                    <article key={plan.priceId} className="card" aria-label={`plan ${plan.name}`}>
                      <h3>{plan.name}</h3>
                      <p>
                        {money(plan.monthlyPrice, plan.currency)} a month · {plan.headline}
                      </p>
                      <ul>
                        {plan.features.map((feature) => (
                          <li key={feature}>{feature}</li>
                        ))}
                      </ul>
                      {activeSubscription?.plan?.priceId === plan.priceId ? (
                        <strong>Your plan</strong>
                      ) : (
                        <button
                          type="button"
                          disabled={go.isPending}
                          onClick={() => go.mutate(() => bf.billing.subscribe.mutate({ priceId: plan.priceId }))}
                        >
                          Subscribe to {plan.name}
                        </button>
                      )}
                    </article>
                  ))}
                </div>
              )}
            </Loaded>
            <h2>Usage, last 30 days</h2>
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
            <figcaption>
              {unitNames[unit]}: {amountOf(unit, String(total))}
            </figcaption>
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
  if (usage.sessions.length === 0) return <p className="muted">No usage in this period.</p>;
  return (
    <table aria-label="usage by session">
      <thead>
        <tr>
          <th>Project</th>
          <th>Session</th>
          <th>CPU</th>
          <th>Network</th>
          <th>Model tokens</th>
          <th>Billed</th>
        </tr>
      </thead>
      <tbody>
        {usage.sessions.map((entry) => (
          <tr key={`${entry.project ?? ''}/${entry.session?.id ?? entry.of}`}>
            <td>{entry.project ?? <span className="muted">deleted</span>}</td>
            <td>{entry.session?.name ?? <span className="muted">{entry.of}</span>}</td>
            <td>{amountOf('cpu', entry.cpu)}</td>
            <td>{amountOf('network', entry.network)}</td>
            <td>{amountOf('tokens', entry.tokens)}</td>
            <td>{money(entry.billed, usage.currency)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
