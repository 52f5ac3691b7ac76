import { describe, expect, it } from 'vitest';
import { redact, redactObject } from '../server/logs/redact.ts';
import { isSealed } from '../server/pipelines/engine/sealedValues.ts';
import { encryptSecrets, openRunSecrets, secretPlaceholder } from '../server/pipelines/runSecrets.ts';

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
