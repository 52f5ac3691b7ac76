import { describe, expect, it } from 'vitest';
import { prepareSandbox } from '../../../server/browsers/host/chromium/browserSandbox.ts';
import { ConfigError } from '../../../server/config.ts';
import { capturingLog } from '../../support/capturingLog.ts';

/** A host checks its sandbox before it serves: it never falls back to unsandboxed browsers by itself. */

describe('a browser host starting', () => {
  it('refuses to start when the sandbox cannot be built, saying what is missing', () => {
    const { log } = capturingLog();
    expect(() => prepareSandbox('no-such-sandbox-user', log)).toThrow(ConfigError);
    expect(() => prepareSandbox('no-such-sandbox-user', log)).toThrow(
      /no-such-sandbox-user does not exist.*BROWSER_SANDBOX=off only for development/s,
    );
  });

  it('builds the sandbox for its user on this machine', () => {
    const { log } = capturingLog();
    const sandbox = prepareSandbox('browserflow-browser', log);
    expect(sandbox).toMatchObject({ user: 'browserflow-browser', switchUser: true });
    expect(sandbox?.uid).toBeGreaterThan(0);
  });

  it('runs without it only when told to (BROWSER_SANDBOX=off), and warns at every start', () => {
    const { log, lines } = capturingLog();
    expect(prepareSandbox(null, log)).toBeNull();
    expect(prepareSandbox(null, log)).toBeNull();
    const warnings = lines.filter((line) => line.level === 40 && line.msg.includes('BROWSER_SANDBOX=off'));
    expect(warnings).toHaveLength(2);
  });
});
