import { pageHeaders } from './authPages.ts';
import type { RawRoutePaths } from './openapi.ts';
import { htmlAnswer } from './rawAnswers.ts';
import type { RawApp } from './rawRoutes.ts';

/**
 * The billing page (`/billing`): the overview, the plans with a subscribe button each, a top-up
 * form and the portal, over the JSON API with the session cookie. A visitor who is not signed in
 * gets a sign-in form first. Stripe's pages are left to Stripe: the buttons go to the URLs the API
 * answers, and Stripe sends the user back here.
 */

const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Billing</title>
<style>
body{font:16px system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left}
.plans{display:flex;gap:1rem;flex-wrap:wrap}.plan{border:1px solid #ccc;border-radius:6px;padding:1rem;min-width:12rem}
label{display:block;margin:.6rem 0}input{padding:.35rem}button{padding:.45rem 1rem;margin-top:.4rem}
#result.error{color:#b00}#result.ok{color:#070}[hidden]{display:none}
</style>
<script src="/billing/page.js" defer></script></head>
<body><h1>Billing</h1><p id="result" role="status"></p>
<form id="sign-in" hidden><p>Sign in to see your billing.</p>
<label>E-mail <input name="email" type="email" autocomplete="email" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>
<main id="billing" hidden>
<section><h2>Balance</h2><table id="balances"><thead><tr><th>Currency</th><th>Available</th><th>Pending</th></tr></thead><tbody></tbody></table></section>
<section><h2>Plan</h2><p id="subscription">No plan.</p><div class="plans" id="plans"></div>
<button type="button" id="portal">Manage billing (invoices, payment methods, cancel)</button></section>
<section><h2>Add funds</h2><form id="top-up"><label>Amount <input name="amount" inputmode="decimal" placeholder="10.00" required></label>
<input type="hidden" name="currency"><button type="submit">Top up</button></form></section>
<section><h2>Recent transactions</h2><table id="transactions"><thead><tr><th>When</th><th>What</th><th>Billed</th><th>Pending</th></tr></thead><tbody></tbody></table></section>
<section><h2>Usage prices</h2><table id="pricing"><thead><tr><th>Unit</th><th>Price per unit (minor units)</th></tr></thead><tbody></tbody></table></section>
</main></body></html>`;

const script = `'use strict';
const $ = (selector) => document.querySelector(selector);
const result = $('#result');
const show = (text, ok) => { result.textContent = text; result.className = ok ? 'ok' : 'error'; };
async function call(method, path, body) {
  const response = await fetch(path, { method, credentials: 'same-origin', headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) { const error = new Error(answer.message || 'The request failed (' + response.status + ')'); error.status = response.status; throw error; }
  return answer;
}
const units = { cpu: 'CPU seconds', network: 'network bytes', tokens: 'model tokens' };
const money = (minor, currency) => (Number(minor) / 100).toFixed(2) + ' ' + currency.toUpperCase();
function row(table, cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) { const td = document.createElement('td'); td.textContent = cell; tr.append(td); }
  $(table + ' tbody').append(tr);
}
async function go(path, body) {
  try { const { url } = await call('POST', path, body); location.assign(url); }
  catch (error) { show(error.message, false); }
}
async function load() {
  let overview;
  try { overview = await call('GET', '/api/billing/overview'); }
  catch (error) {
    if (error.status === 401) { $('#sign-in').hidden = false; return; }
    return show(error.message, false);
  }
  const plans = await call('GET', '/api/billing/plans');
  $('#billing').hidden = false;
  for (const balance of overview.balances) row('#balances', [balance.currency.toUpperCase(), money(balance.available, balance.currency), money(balance.pending, balance.currency)]);
  $('#top-up').currency.value = overview.balances[0] ? overview.balances[0].currency : 'usd';
  const active = overview.activeSubscription;
  if (active) {
    const left = Object.entries(active.remaining).map(([unit, amount]) => amount + ' ' + units[unit]).join(', ');
    $('#subscription').textContent = (active.plan ? active.plan.name : 'A plan') + ' (' + active.status + '). Left this period: ' + left + '.';
  }
  if (!overview.billingEnabled) { $('#subscription').textContent = 'Billing is not enabled on this service.'; $('#portal').hidden = true; $('#top-up').hidden = true; }
  for (const plan of plans) {
    const card = document.createElement('div'); card.className = 'plan';
    const name = document.createElement('h3'); name.textContent = plan.name;
    const price = document.createElement('p'); price.textContent = money(plan.monthlyPrice, plan.currency) + ' a month' + (plan.headline ? ' — ' + plan.headline : '');
    const features = document.createElement('ul');
    for (const feature of plan.features) { const li = document.createElement('li'); li.textContent = feature; features.append(li); }
    const button = document.createElement('button'); button.type = 'button'; button.textContent = 'Subscribe to ' + plan.name;
    button.disabled = Boolean(active && active.plan && active.plan.priceId === plan.priceId);
    button.addEventListener('click', () => go('/api/billing/subscription', { priceId: plan.priceId }));
    card.append(name, price, features, button);
    $('#plans').append(card);
  }
  for (const t of overview.transactions) {
    if (t.type === 'top_up') row('#transactions', [new Date(t.created).toLocaleString(), 'Top-up', '+' + money(t.amount, t.currency), '']);
    else row('#transactions', [new Date(t.created).toLocaleString(), t.quantity + ' ' + units[t.unit], money(t.billed, t.currency), t.pending === '0' ? '' : money(t.pending, t.currency)]);
  }
  for (const price of overview.usagePricing) row('#pricing', [units[price.unit], price.pricePerUnit + ' ' + price.currency.toUpperCase()]);
}
$('#portal').addEventListener('click', () => go('/api/billing/portal'));
$('#top-up').addEventListener('submit', (event) => {
  event.preventDefault();
  go('/api/billing/top-up', { amount: event.target.amount.value.trim(), currency: event.target.currency.value });
});
$('#sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const answer = await call('POST', '/api/auth/login', { email: event.target.email.value, password: event.target.password.value });
    if (answer.status === '2fa_required') return location.assign('/auth/2fa?returnUrl=/billing');
    location.reload();
  } catch (error) { show(error.message, false); }
});
const query = new URLSearchParams(location.search);
if (query.get('checkout') === 'done' || query.get('top-up') === 'done') show('Thank you: the payment is on its way to your account.', true);
load();
`;

export const billingPagePaths: RawRoutePaths = {
  '/billing': {
    get: {
      summary: 'The billing page: balance, plan, plans to subscribe to, a top-up form and the portal (signs in first if needed)',
      tags: ['billing'],
      responses: htmlAnswer(),
    },
  },
};

export function registerBillingPage(app: RawApp) {
  app.get('/billing', async (_req, reply) => reply.headers(pageHeaders).send(html));
  app.get('/billing/page.js', async (_req, reply) =>
    reply.headers({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }).send(script),
  );
}
