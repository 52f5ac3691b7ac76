import type { AppDeps } from '../appDeps.ts';
import { escapeHtml } from './html.ts';
import { htmlAnswer } from './rawAnswers.ts';
import { appDeps, type RawParameter, rawRouteGroup, routesOf } from './rawRoute.ts';

/**
 * The pages the service's own links lead to: the mailed verification and reset links, and the
 * OpenID Connect redirects to registration, to a link's confirmation and to the second factor. A
 * self-hosted install has no front end of its own, so these small pages complete each step against
 * the JSON API; a front end may serve the same paths instead. Tokens stay in the URL the user was given and are sent only to
 * the API (no Referer, no third-party resources), and a returnUrl is followed on this origin only.
 */

type Page = { title: string; body: string };

const pages: Record<'verify' | 'reset' | 'externalRegister' | 'externalLink' | 'twoFactor', Page> = {
  verify: {
    title: 'Confirm your e-mail address',
    body: `<p>Confirm the e-mail address of your account.</p>
<form data-action="verify"><button type="submit">Confirm my e-mail address</button></form>`,
  },
  reset: {
    title: 'Choose a new password',
    body: `<form data-action="reset">
<label>New password <input name="password" type="password" autocomplete="new-password" minlength="8" required></label>
<label>Repeat it <input name="confirmPassword" type="password" autocomplete="new-password" minlength="8" required></label>
<button type="submit">Set the new password</button></form>`,
  },
  externalRegister: {
    title: 'Create your account',
    body: `<p>Your sign-in provider did not match an account here. Check the details and create one.</p>
<form data-action="external-register">
<label>E-mail <input name="email" type="email" autocomplete="email"></label>
<label>First name <input name="firstName" autocomplete="given-name"></label>
<label>Last name <input name="lastName" autocomplete="family-name"></label>
<button type="submit">Create the account</button></form>`,
  },
  externalLink: {
    title: 'Link a sign-in provider',
    // Filled in by the script from the API; hidden until it is, so nobody confirms a blank page.
    body: `<form data-action="external-link" hidden>
<p>Link this account at <strong data-field="provider"></strong> to your account here?</p>
<dl>
<dt>Account at the provider</dt><dd data-field="identity"></dd>
<dt>Your account here</dt><dd data-field="account"></dd>
</dl>
<p>Whoever can sign in to that provider account will be able to sign in to yours. If you did not just choose it, cancel.</p>
<button type="submit">Link</button> <button type="button" data-cancel>Cancel</button></form>`,
  },
  twoFactor: {
    title: 'Two-factor sign-in',
    body: `<form data-action="2fa">
<label>Code from your authenticator app, or a recovery code
<input name="token" autocomplete="one-time-code" inputmode="text" required></label>
<button type="submit">Sign in</button></form>`,
  },
};

function render(page: Page) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(page.title)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.8rem 0}input{display:block;width:100%;padding:.4rem;margin-top:.2rem;box-sizing:border-box}button{padding:.5rem 1rem;margin-top:.5rem}#result.error{color:#b00}#result.ok{color:#070}</style>
<script src="/auth/pages.js" defer></script></head>
<body><h1>${escapeHtml(page.title)}</h1>${page.body}<p id="result" role="status"></p></body></html>`;
}

/**
 * One script for every page: it reads the token from the URL, posts to the API, and shows the
 * answer's message. Served as a file so the pages can forbid inline scripts.
 */
const script = `'use strict';
const result = document.getElementById('result');
const show = (text, ok) => { result.textContent = text; result.className = ok ? 'ok' : 'error'; };
const query = new URLSearchParams(location.search);
const sameOrigin = (url) => {
  try { const target = new URL(url, location.origin); return target.origin === location.origin ? target.href : '/'; }
  catch { return '/'; }
};
async function post(path, body) {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.message || 'The request failed (' + response.status + ')');
  return answer;
}
const pathToken = location.pathname.split('/').pop();
const fill = (form, field, text) => { form.querySelector('[data-field="' + field + '"]').textContent = text; };
const actions = {
  verify: async () => {
    await post('/api/auth/verify/submit', { token: query.get('token') || '' });
    show('Your e-mail address is confirmed.', true);
  },
  reset: async (form) => {
    await post('/api/auth/reset/submit', { token: query.get('token') || '', password: form.password.value, confirmPassword: form.confirmPassword.value });
    show('Your password is changed; sign in with the new one.', true);
  },
  'external-register': async (form) => {
    const body = { token: pathToken };
    for (const field of ['email', 'firstName', 'lastName']) if (form[field].value) body[field] = form[field].value;
    const answer = await post('/api/auth/external/register', body);
    show(answer.status === 'email_not_verified' ? 'Your account is created: confirm your e-mail address with the mail we sent.' : 'Your account is created and you are signed in.', true);
  },
  'external-link': async () => {
    const answer = await post('/api/auth/external/link/confirm', { token: pathToken });
    show('Linked.', true);
    location.assign(sameOrigin(answer.returnUrl));
  },
  '2fa': async (form) => {
    await post('/api/auth/2fa/verify', { token: form.token.value.trim() });
    show('Signed in.', true);
    location.assign(sameOrigin(query.get('returnUrl') || '/'));
  },
};
const form = document.querySelector('form[data-action]');
form.addEventListener('submit', (event) => {
  event.preventDefault();
  const button = form.querySelector('button');
  button.disabled = true;
  actions[form.dataset.action](form).then(
    () => { if (form.dataset.action !== '2fa') form.hidden = true; },
    (error) => { show(error.message, false); button.disabled = false; },
  );
});
if (form.dataset.action === 'external-register') {
  fetch('/api/auth/external/register/' + encodeURIComponent(pathToken)).then((r) => r.json().then((details) => {
    if (!r.ok) return show(details.message || 'This registration link is no longer valid.', false);
    for (const field of ['email', 'firstName', 'lastName']) if (details[field]) form[field].value = details[field];
  }));
}
if (form.dataset.action === 'external-link') {
  fetch('/api/auth/external/link/' + encodeURIComponent(pathToken), { credentials: 'same-origin' }).then((r) => r.json().then((details) => {
    if (!r.ok) return show(details.message || 'This link request is no longer valid.', false);
    const name = [details.firstName, details.lastName].filter(Boolean).join(' ');
    fill(form, 'provider', details.provider);
    fill(form, 'identity', [name, details.email].filter(Boolean).join(', ') || details.subject);
    fill(form, 'account', details.account.firstName + ' ' + details.account.lastName + ', ' + details.account.email);
    form.hidden = false;
  }));
  const cancel = form.querySelector('[data-cancel]');
  cancel.addEventListener('click', () => {
    cancel.disabled = true;
    post('/api/auth/external/link/cancel', { token: pathToken }).then(
      (answer) => { form.hidden = true; show('Nothing was linked.', true); location.assign(sameOrigin(answer.returnUrl)); },
      (error) => { show(error.message, false); cancel.disabled = false; },
    );
  });
}
`;

/** The headers of the service's own pages: their scripts are files of this origin, nothing else runs or frames them. */
export const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  // The token is in this page's URL: no Referer carries it anywhere.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};

const route = routesOf<AppDeps>();

/** A page of `pages`, rendered once, under the pages' headers. */
const page = (path: string, operationId: string, summary: string, shown: Page, parameters: RawParameter[] = []) => {
  const html = render(shown);
  return route({
    method: 'GET',
    path,
    doc: { operationId, summary, tags: ['auth pages'], parameters, responses: htmlAnswer() },
    serve: () => async (_req, reply) => reply.headers(pageHeaders).send(html),
  });
};
const tokenQuery: RawParameter = { name: 'token', in: 'query', required: true, schema: { type: 'string' } };

export const authPageRoutes = rawRouteGroup(appDeps, [
  page('/auth/verify', 'pages-verify-email', 'Page behind the verification mail: confirms the address with a button', pages.verify, [
    tokenQuery,
  ]),
  page('/auth/reset', 'pages-reset-password', 'Page behind the password-reset mail: sets a new password', pages.reset, [tokenQuery]),
  page(
    '/auth/external-register/{token}',
    'pages-external-register',
    'Page an unknown OpenID Connect identity lands on: creates the account',
    pages.externalRegister,
  ),
  page(
    '/auth/external-link/{token}',
    'pages-external-link',
    'Page a link flow (started signed in) lands on: shows the provider’s identity and the account, and links it only when the user presses Link',
    pages.externalLink,
  ),
  page(
    '/auth/2fa',
    'pages-two-factor',
    'Page a sign-in with two-factor on lands on: takes the code, then follows returnUrl (same origin)',
    pages.twoFactor,
    [{ name: 'returnUrl', in: 'query', required: false, schema: { type: 'string' } }],
  ),
  route({
    method: 'GET',
    path: '/auth/pages.js',
    serve: () => async (_req, reply) =>
      reply.headers({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }).send(script),
  }),
]);
