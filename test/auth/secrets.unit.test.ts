import { describe, expect, it } from 'vitest';
import { openString, sealString } from '../../server/auth/secrets.ts';

const serviceSecret = 'a service secret of at least thirty-two characters';

describe('sealed strings', () => {
  it('open with the same service secret and purpose, and differ each time they are sealed', () => {
    const first = sealString(serviceSecret, 'totp-secret', 'JBSWY3DPEHPK3PXP');
    const second = sealString(serviceSecret, 'totp-secret', 'JBSWY3DPEHPK3PXP');
    expect(first).not.toBe(second);
    expect(first).not.toContain('JBSWY3DPEHPK3PXP');
    expect(openString(serviceSecret, 'totp-secret', first)).toBe('JBSWY3DPEHPK3PXP');
    expect(openString(serviceSecret, 'totp-secret', second)).toBe('JBSWY3DPEHPK3PXP');
  });

  it('do not open under another service secret, another purpose, or once tampered with', () => {
    const sealed = sealString(serviceSecret, 'totp-secret', 'JBSWY3DPEHPK3PXP');
    expect(openString(`${serviceSecret}!`, 'totp-secret', sealed)).toBeNull();
    expect(openString(serviceSecret, 'other-purpose', sealed)).toBeNull();
    const [version, iv, tag, data] = sealed.split('.') as [string, string, string, string];
    const flipped = `${data.startsWith('A') ? 'B' : 'A'}${data.slice(1)}`;
    expect(openString(serviceSecret, 'totp-secret', [version, iv, tag, flipped].join('.'))).toBeNull();
    expect(openString(serviceSecret, 'totp-secret', 'JBSWY3DPEHPK3PXP')).toBeNull();
    expect(openString(serviceSecret, 'totp-secret', 'v1.x.y')).toBeNull();
  });
});
