import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createLogger, redactLogLine, redactUrl, requestLogger, tokenLikeSegment } from '../../server/logger.ts';
import { redact, redactObject, redactor } from '../../server/logs/redact.ts';
import { findSecrets, redactFoundSecrets } from '../../server/logs/secretRecogniser.ts';
import { nodeCatalog } from '../../server/pipelines/engine/registry.ts';
import { isSealed } from '../../server/pipelines/engine/sealedValues.ts';
import { encryptSecrets, openRunSecrets, secretPlaceholder } from '../../server/pipelines/runSecrets.ts';

/** Redaction and sealing are pure: plain values, no database. */

describe('redacting secrets from what a run writes', () => {
  it('removes a secret of any length, once, however it is written', () => {
    expect(redact('pin 42 and 42', ['42'])).toBe('pin [redacted] and [redacted]');
    expect(redact('a', ['a'])).toBe('[redacted]');
    // One pass: the marker is not redacted again by a secret made of its letters.
    expect(redact('x d e x', ['x', 'd', 'e'])).toBe('[redacted] [redacted] [redacted] [redacted]');
    const quoted = 'pa"ss\\word';
    expect(redact(`json ${JSON.stringify(quoted)} url http://h/?pw=${encodeURIComponent(quoted)}`, [quoted])).toBe(
      'json "[redacted]" url http://h/?pw=[redacted]',
    );
    expect(redact(new URL(`http://h/?${quoted}`).href, [quoted])).toBe('http://h/?[redacted]');
  });

  it('removes a secret from a page address however the address holds it: a form sent by GET, the user info, the path', () => {
    const secret = "s3cret pass/wörd!~'()";
    // A form sent by GET: a space is `+`, and `!~'()` are encoded.
    const form = new URL('http://shop.test/login');
    form.search = new URLSearchParams({ user: 'ada', pw: secret }).toString();
    expect(form.href).toContain('s3cret+pass');
    expect(redact(form.href, [secret])).toBe('http://shop.test/login?user=ada&pw=[redacted]');
    const withUserInfo = new URL('http://shop.test/orders');
    withUserInfo.username = 'ada';
    withUserInfo.password = secret;
    expect(redact(withUserInfo.href, [secret])).toBe('http://ada:[redacted]@shop.test/orders');
    expect(redact(new URL(`http://shop.test/reset/${secret}`).href, [secret])).toBe('http://shop.test/reset/[redacted]');
  });

  it('walks the values of an object, leaving its keys', () => {
    const secret = 'pa"ss\\word';
    expect(redactObject({ password: `is ${secret}`, list: [secret, 7], secret: 'kept' }, [secret, 'password'])).toEqual({
      password: 'is [redacted]',
      list: ['[redacted]', 7],
      secret: 'kept',
    });
    expect(redactObject({ pin: 1234 }, ['1234'])).toEqual({ pin: '[redacted]' });
  });
});

describe('recognising secrets nobody named (prompts, page text, model answers)', () => {
  // Each phrasing with the value it must find; the text around the value stays as written.
  const phrasings: [string, string][] = [
    ['password: x', 'x'],
    ['password=x', 'x'],
    ['password = hunter2', 'hunter2'],
    ['password is x', 'x'],
    ['the password is: hunter2', 'hunter2'],
    ["pwd 'x'", 'x'],
    ['"password": "x"', 'x'],
    ["{'password': 'x'}", 'x'],
    ['{\\"password\\": \\"x\\"}', 'x'],
    ["log in with password 'hunter 2'", 'hunter 2'],
    ['log in with password "hunter2"', 'hunter2'],
    ['password `hunter2`', 'hunter2'],
    ['password “hunter2”', 'hunter2'],
    ['password ‘hunter2’', 'hunter2'],
    ['log in as ada@example.com with password hunter2', 'hunter2'],
    ['log in with password swordfish and list the orders', 'swordfish'],
    ['passwd=hunter2', 'hunter2'],
    ['passcode: 4321', '4321'],
    ['passphrase: tr0ub4dor&3', 'tr0ub4dor&3'],
    ['Password: Tr0ub4dor&3', 'Tr0ub4dor&3'],
    ['the password for the admin account on the staging shop is hunter2', 'hunter2'],
    ['password - hunter2', 'hunter2'],
    ['password – hunter2', 'hunter2'],
    ['pw: x', 'x'],
    ['pin 1234', '1234'],
    ['PIN: 1234', '1234'],
    ['my 2fa code is 123456', '123456'],
    ['the one time password is 998877', '998877'],
    ['secret: abc', 'abc'],
    ['client_secret=abcd', 'abcd'],
    ['token: abc', 'abc'],
    ['token abc123def', 'abc123def'],
    ['api key: abc123', 'abc123'],
    ['API key "abc"', 'abc'],
    ['apikey=abc', 'abc'],
    ['api_key: "abc"', 'abc'],
    ['x-api-key: abc123', 'abc123'],
    ['DB_PASSWORD=hunter2', 'hunter2'],
    ['adminPassword: "x"', 'x'],
    ['Authorization: Bearer xyz', 'xyz'],
    ['bearer xyz', 'xyz'],
    ['credentials: admin/hunter2', 'admin/hunter2'],
    ['set the password to hunter2', 'hunter2'],
    ['the password for the admin account is hunter2', 'hunter2'],
    ['the password for admin is swordfish.', 'swordfish'],
    ['the token for the staging api: abc123def', 'abc123def'],
    ['use hunter2 as the password', 'hunter2'],
    ["use 'hunter 2' as the admin password", 'hunter 2'],
    ['hunter2 is my password', 'hunter2'],
    ['open https://ada:s3cret@shop.test/login', 's3cret'],
    ['the token (rotate it monthly) 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c', '3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c'],
    ['use sk-abcdefghijklmnopqrstuvwxyz123456', 'sk-abcdefghijklmnopqrstuvwxyz123456'],
    ['ghp_abcdefghijklmnopqrstuvwxyz0123456789 in the header', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['keys AKIAIOSFODNN7EXAMPLE and more', 'AKIAIOSFODNN7EXAMPLE'],
    [
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    ],
  ];

  it.each(phrasings)('finds the value of %j', (text, value) => {
    expect(findSecrets(text).map((found) => found.value)).toEqual([value]);
    const redacted = redactFoundSecrets(text);
    expect(redacted).not.toContain(value);
    expect(redacted).toBe(text.replace(value, '[redacted]'));
  });

  it('names a password a password, anything else a secret', () => {
    expect(findSecrets('pwd: a1 token: b2 https://u:c3@h').map((found) => [found.value, found.kind])).toEqual([
      ['a1', 'password'],
      ['b2', 'secret'],
      ['c3', 'password'],
    ]);
  });

  const prose = [
    'open the password-protected page',
    'reset the password - it expired',
    'see ?user=ada&next=/orders',
    'Forgot password?',
    'Reset password',
    'Show password',
    'Password (required)',
    'Password: ',
    '- textbox "Password": [value hidden]',
    '- link "Forgot password?"',
    'Enter your password and click sign in',
    'type your password',
    'the password field',
    'password manager',
    'passwords do not match',
    'the password is required',
    'the password is wrong',
    'the password is case-sensitive.',
    'Your password has been changed',
    'A password is written on POST',
    'Password must be at least 8 characters',
    'Your token expires in 5 minutes',
    'Your session token will be sent',
    'a model token 0.0001 cents',
    'Tokens used: 300',
    'top secret plans.',
    'the secret sauce is love',
    'the api key page',
    'pin the tab',
    'This is your password',
    'Use it as the password',
    'log in with password "{{password}}" and token: [redacted]',
    '{"name":"password","description":"the password the prompt gave","secret":true}',
    '{"selector":"#password","value":"{{password}}"}',
    'usage: {"inputTokens": 100, "outputTokens": 20}',
    'resource 3fa85f64-5717-4562-b3fc-2c963f66afa6 token',
  ];

  it.each(prose)('leaves %j as it is', (text) => {
    expect(findSecrets(text)).toEqual([]);
  });

  it('leaves data alone: a screenshot’s base64 stays whole, a name inside it included', () => {
    const data = (seed: number) => Buffer.from(Array.from({ length: 6000 }, (_, i) => (i * 7919 + seed) % 256)).toString('base64');
    const screenshot = `${data(1)}xPwd+Token/${data(2)}`;
    expect(findSecrets(screenshot)).toEqual([]);
    expect(findSecrets(`token: ${data(3)}`)).toEqual([]);
  });

  it('leaves what the service itself sends a model as it is: the node catalog', () => {
    const catalog = JSON.stringify(nodeCatalog());
    expect(redactFoundSecrets(catalog)).toBe(catalog);
  });

  it('keeps JSON text JSON: a value is replaced inside its quotes', () => {
    const message = JSON.stringify({ goal: 'log in with password "hunter2" and pwd: x2', secret: true, pin: 1234 });
    const redacted = redactFoundSecrets(message);
    expect(JSON.parse(redacted)).toEqual({
      goal: 'log in with password "[redacted]" and pwd: [redacted]',
      secret: true,
      pin: '[redacted]',
    });
    // Inside JSON inside JSON too (a tool result quoted in a message).
    const nested = JSON.stringify({ text: message });
    expect(JSON.parse(JSON.parse(redactFoundSecrets(nested)).text)).toEqual(JSON.parse(redacted));
  });

  it('a redactor recognises only when asked: a run keeps what its pages print', () => {
    expect(redactor([]).text('the password is hunter2')).toBe('the password is hunter2');
    expect(redactor([], { recognise: true }).text('the password is hunter2')).toBe('the password is [redacted]');
    // Token shapes go everywhere.
    expect(redactor([]).text('key ghp_abcdefghijklmnopqrstuvwxyz0123456789')).toBe('key [redacted]');
  });
});

describe('sealing values that hold a secret on their way through the workflow', () => {
  const serviceSecret = 'service-secret-for-tests';
  const secrets = openRunSecrets(serviceSecret, encryptSecrets(serviceSecret, { pw: 'hunter2' }));

  it('seals only the values that hold a secret, and opens them to the real values', () => {
    const outputs = { text: 'pre-hunter2', items: ['plain', 'x hunter2'], count: 2 };
    const sealed = secrets.seal(outputs);
    expect(JSON.stringify(sealed)).not.toContain('hunter2');
    expect(sealed.items[0]).toBe('plain');
    expect(sealed.count).toBe(2);
    expect(secrets.reveal(sealed)).toEqual(outputs);
    expect(secrets.reveal({ value: secretPlaceholder('pw') })).toEqual({ value: 'hunter2' });
  });

  it('seals strings only: a number or boolean stays as it is, so conditions and loop limits see it', () => {
    const pin = openRunSecrets(serviceSecret, encryptSecrets(serviceSecret, { pin: '1234' }));
    const sealed = pin.seal({ count: 1234, ok: true, text: 'pin 1234' });
    expect(sealed.count).toBe(1234);
    expect(sealed.ok).toBe(true);
    expect(isSealed(sealed.text)).toBe(true);
    expect(pin.reveal(sealed).text).toBe('pin 1234');
  });

  it('leaves the outputs of a run without secrets as they are', () => {
    const none = openRunSecrets(serviceSecret, null);
    const outputs = { text: 'anything' };
    expect(none.seal(outputs)).toBe(outputs);
  });
});

describe('log lines: credentials in URLs, wherever a line holds one', () => {
  const coordinatorToken = 'coordinator-token-for-the-tests';
  const relayToken = `1900000000.${'Ab3_'.repeat(10)}xY9`;
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
  const randomToken = 'q7Hf2LxPz9Rk4TmW8bNc3VdY6gJs1AeU5oIi0KlMnBv';

  it('blanks the token of a token-bearing route, whatever it looks like', () => {
    expect(redactUrl(`/api/coordinator/${coordinatorToken}/usage`)).toBe('/api/coordinator/[redacted]/usage');
    expect(redactUrl(`http://api.test/api/coordinator/${coordinatorToken}/usage?x=1`)).toBe(
      'http://api.test/api/coordinator/[redacted]/usage?x=1',
    );
    expect(redactUrl('/auth/external-register/plain-words-token')).toBe('/auth/external-register/[redacted]');
    expect(redactUrl('/api/auth/external/link/confirm')).toBe('/api/auth/external/link/confirm');
    expect(redactUrl('ws://127.0.0.1:9222/devtools/browser/3fa85f64-5717-4562-b3fc-2c963f66afa6')).toBe(
      'ws://127.0.0.1:9222/devtools/browser/[redacted]',
    );
  });

  it('blanks a path segment that is a token anywhere: JWTs, relay tokens, hex and random-looking runs', () => {
    for (const token of [jwt, relayToken, 'aaaaaaaab1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6', randomToken]) {
      expect(tokenLikeSegment(token), token).toBe(true);
      expect(redactUrl(`/x/${token}/y`)).toBe('/x/[redacted]/y');
    }
  });

  it('keeps ids, slugs, words and file names', () => {
    for (const segment of [
      '3fa85f64-5717-4562-b3fc-2c963f66afa6',
      'my-project-slug-2024-final',
      'node_modules',
      'EntityManager.js:123:45)',
    ]) {
      expect(tokenLikeSegment(segment), segment).toBe(false);
    }
    const url = '/my-project-slug-2024-final/api/sessions/3fa85f64-5717-4562-b3fc-2c963f66afa6/logs?limit=10';
    expect(redactUrl(url)).toBe(url);
  });

  it('blanks secret query parameters, an unencoded tRPC input included', () => {
    expect(redactUrl('/cdp?token=abc&x=1')).toBe('/cdp?token=[redacted]&x=1');
    const line = JSON.stringify({ msg: `GET /trpc/q?input={"token":"${randomToken}"}&batch=1 failed` });
    expect(redactLogLine(line)).toBe(JSON.stringify({ msg: 'GET /trpc/q?input=[redacted]&batch=1 failed' }));
  });

  it('every line of the logger: messages, errors, nested fields and the request log, each still JSON', async () => {
    const lines: string[] = [];
    const log = createLogger({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
    const app = Fastify({ loggerInstance: log });
    app.post('/api/coordinator/:token/*', async (req) => {
      req.log.warn({ target: { url: `http://relay.test/resources/r?token=${relayToken}` } }, `coordinator call on ${req.url}`);
      throw new Error(`nothing at ${req.url} (bearer ${jwt})`);
    });
    const answer = await app.inject({ method: 'POST', url: `/api/coordinator/${coordinatorToken}/usage` });
    expect(answer.statusCode).toBe(500);
    log.error({ err: new Error(`fetch http://h.test/x/${randomToken}/y failed`) }, 'workflow step failed');
    await app.close();
    const written = lines.join('');
    for (const secret of [coordinatorToken, relayToken, jwt, randomToken]) expect(written).not.toContain(secret);
    expect(written).toContain('/api/coordinator/[redacted]/usage');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.some((line) => JSON.parse(line).req?.url === '/api/coordinator/[redacted]/usage')).toBe(true);
  });
});

describe('a request’s log (made on its first line)', () => {
  it('carries the request id, hides credentials, keeps levels, and writes nothing below the level', async () => {
    const lines: string[] = [];
    const log = createLogger({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
    const app = Fastify({ loggerInstance: log, childLoggerFactory: requestLogger, disableRequestLogging: true });
    app.get('/quiet', async (req) => {
      req.log.debug('below the level');
      return { level: req.log.level, debug: req.log.isLevelEnabled('debug') };
    });
    app.get('/chatty/:token', async (req) => {
      req.log.info({ url: req.url }, 'first line');
      req.log.child({ part: 'inner' }).warn('from a child');
      return {};
    });
    app.get('/verbose', { logLevel: 'debug' }, async (req) => {
      req.log.debug('a route of its own level');
      return {};
    });
    const quiet = await app.inject({ url: '/quiet' });
    expect(quiet.json()).toEqual({ level: 'info', debug: false });
    expect(lines).toEqual([]);
    const token = 'f3a9c07d5e1b42c8a6d09e7f1b3c5a7d9e0f2a4c';
    await app.inject({ url: `/chatty/${token}` });
    await app.inject({ url: '/verbose' });
    await app.close();
    const written = lines.map((line) => JSON.parse(line));
    expect(written.map((line) => line.msg)).toEqual(['first line', 'from a child', 'a route of its own level']);
    expect(written[0].reqId).toBeTruthy();
    expect(written[1]).toMatchObject({ reqId: written[0].reqId, part: 'inner', level: 40 });
    expect(written[2].reqId).toBeTruthy();
    expect(written[2].reqId).not.toBe(written[0].reqId);
    expect(lines.join('')).not.toContain(token);
  });
});
