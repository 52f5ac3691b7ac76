import { describe, expect, it } from 'vitest';
import { guardCdpMessage, isNavigableUrl } from '../server/http/browsers/cdpGuard.ts';

/** The CDP guard's rules on their own; test/cdp-guard.test.ts drives them through a real browser. */

const send = (method: string, params: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  guardCdpMessage(JSON.stringify({ id: 7, method, params, ...extra }));

describe('isNavigableUrl', () => {
  it.each([
    'http://example.test/',
    'https://example.test/a?b#c',
    'data:text/html,hi',
    'about:blank',
    'about:srcdoc',
    'view-source:https://example.test/',
    '',
  ])('lets %j through', (url) => expect(isNavigableUrl(url)).toBe(true));

  it.each([
    'file:///etc/passwd',
    'FILE:///etc/passwd',
    ' fi\tle:///etc/passwd',
    'view-source:file:///etc/passwd',
    'view-\tsource:view-source:file:///etc/passwd',
    'chrome://version',
    'about:version',
    'about:net-export',
    'devtools://devtools/bundled/inspector.html',
    'chrome-extension://abc/x.html',
    'javascript:alert(1)',
    'filesystem:http://example.test/temporary/x',
    'not a url',
  ])('refuses %j', (url) => expect(isNavigableUrl(url)).toBe(false));
});

describe('guardCdpMessage', () => {
  it('answers a refused command itself, with its id and session', () => {
    const verdict = send('Page.navigate', { url: 'file:///etc/passwd' }, { sessionId: 'S1' });
    expect('refuse' in verdict && JSON.parse(verdict.reply)).toMatchObject({
      id: 7,
      sessionId: 'S1',
      error: { code: -32000, message: expect.stringMatching(/refused by the service/) },
    });
  });

  it('refuses host paths, DevTools exposure, extensions and perfetto configs', () => {
    for (const [method, params] of [
      ['DOM.setFileInputFiles', { files: ['/etc/passwd'], nodeId: 1 }],
      ['Input.dispatchDragEvent', { type: 'drop', x: 1, y: 1, data: { items: [], files: ['/etc/passwd'], dragOperationsMask: 1 } }],
      ['Target.exposeDevToolsProtocol', { targetId: 't' }],
      ['Target.openDevTools', { targetId: 't' }],
      ['Extensions.loadUnpacked', { path: '/tmp/x' }],
      ['PWA.install', { manifestId: 'x', installUrlOrBundleUrl: 'file:///x' }],
      ['Tracing.start', { perfettoConfig: 'AAAA' }],
      ['Network.loadNetworkResource', { url: 'file:///etc/passwd', options: {} }],
      ['Fetch.continueRequest', { requestId: 'r', url: 'file:///etc/passwd' }],
      ['Target.createTarget', { url: 'chrome://settings' }],
    ] as const) {
      expect('refuse' in send(method, params), method).toBe(true);
    }
  });

  it('checks the command inside Target.sendMessageToTarget', () => {
    const inner = (url: string) => JSON.stringify({ id: 1, method: 'Page.navigate', params: { url } });
    expect('refuse' in send('Target.sendMessageToTarget', { targetId: 't', message: inner('file:///x') })).toBe(true);
    expect('forward' in send('Target.sendMessageToTarget', { targetId: 't', message: inner('https://x.test/') })).toBe(true);
  });

  it('turns allowed downloads into denied ones, without the folder', () => {
    const verdict = send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: '/root', eventsEnabled: true });
    expect('forward' in verdict && JSON.parse(verdict.forward).params).toEqual({ behavior: 'deny', eventsEnabled: true });
  });

  it('forwards what it checked: the last of duplicate keys, re-serialised', () => {
    const verdict = guardCdpMessage('{"id":1,"method":"Page.navigate","params":{"url":"file:///x"},"params":{"url":"https://x.test/"}}');
    expect('forward' in verdict && verdict.forward).toBe('{"id":1,"method":"Page.navigate","params":{"url":"https://x.test/"}}');
    expect(
      'refuse' in guardCdpMessage('{"id":1,"method":"Page.navigate","params":{"url":"https://x.test/"},"params":{"url":"file:///x"}}'),
    ).toBe(true);
  });

  it('forwards ordinary commands unchanged', () => {
    for (const [method, params] of [
      ['Page.navigate', { url: 'https://x.test/' }],
      ['Target.createTarget', { url: 'about:blank' }],
      ['Runtime.evaluate', { expression: '1 + 1' }],
      ['DOM.setFileInputFiles', { files: [], nodeId: 1 }],
      ['Browser.setDownloadBehavior', { behavior: 'deny' }],
    ] as const) {
      const verdict = send(method, params);
      expect('forward' in verdict && JSON.parse(verdict.forward), method).toEqual({ id: 7, method, params });
    }
  });

  it('answers a message that is not JSON without forwarding it', () => {
    expect('refuse' in guardCdpMessage('{"id":1,')).toBe(true);
  });
});
