import { describe, expect, it } from 'vitest';
import { guardCdpMessage, isNavigableUrl } from '../../server/http/browsers/cdpGuard.ts';

/** The CDP guard's rules on their own; test/browsers/cdp-guard.test.ts drives them through a real browser. */

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

  it('lets a download behaviour allow or deny, never name the folder', () => {
    for (const method of ['Browser.setDownloadBehavior', 'Page.setDownloadBehavior']) {
      for (const [behavior, becomes] of [
        ['allowAndName', 'allowAndName'],
        ['allow', 'allowAndName'],
        ['default', 'allowAndName'],
        ['deny', 'deny'],
        ['whatever', 'deny'],
      ]) {
        const verdict = send(method, { behavior, downloadPath: '/root', eventsEnabled: true });
        expect('forward' in verdict && JSON.parse(verdict.forward).params, `${method} ${behavior}`).toEqual({
          behavior: becomes,
          eventsEnabled: true,
        });
      }
    }
    const scoped = send('Browser.setDownloadBehavior', { behavior: 'default', browserContextId: 'C1', downloadPath: '/tmp' });
    expect('forward' in scoped && JSON.parse(scoped.forward).params).toEqual({ behavior: 'allowAndName', browserContextId: 'C1' });
    // Inside an old-style message to a target too.
    const inner = JSON.stringify({ id: 1, method: 'Page.setDownloadBehavior', params: { behavior: 'allow', downloadPath: '/etc' } });
    const wrapped = send('Target.sendMessageToTarget', { targetId: 't', message: inner });
    expect('forward' in wrapped && JSON.parse(JSON.parse(wrapped.forward).params.message).params).toEqual({ behavior: 'allowAndName' });
  });

  it('refuses a method it does not list with JSON-RPC’s method-not-found, naming it', () => {
    for (const method of [
      'Browser.noSuchMethod',
      'NoSuchDomain.enable',
      'Page.navigate ',
      'page.navigate',
      'Ads.getAdMetrics',
      'toString',
      '__proto__.x',
    ]) {
      const verdict = send(method, {});
      expect('refuse' in verdict && JSON.parse(verdict.reply), method).toEqual({
        id: 7,
        error: {
          code: -32601,
          message: `${method} refused by the service: the service does not allow this method (docs/browsers.md lists those it does)`,
        },
      });
    }
    expect('refuse' in guardCdpMessage(JSON.stringify({ id: 1, params: {} }))).toBe(true);
    expect('refuse' in guardCdpMessage(JSON.stringify({ id: 1, method: ['Page.navigate'] }))).toBe(true);
  });

  it('refuses what reaches the host with its reason', () => {
    for (const [method, reason] of [
      ['Tethering.bind', /binds ports/],
      ['SystemInfo.getProcessInfo', /describes the host/],
      ['Cast.startTabMirroring', /devices on the host’s network/],
      ['DeviceAccess.selectPrompt', /devices/],
      ['Target.setRemoteLocations', /addresses/],
      ['Browser.executeBrowserCommand', /browser UI/],
      ['Browser.getBrowserCommandLine', /command line/],
      ['DOM.getFileInfo', /host paths/],
      ['Page.crash', /dump/],
      ['Page.addCompilationCache', /compiled code/],
      ['Page.produceCompilationCache', /compilation caches/],
      ['LayerTree.loadSnapshot', /Skia pictures/],
      ['Browser.setDockTile', /image to decode/],
    ] as const) {
      const verdict = send(method, {});
      expect('refuse' in verdict && JSON.parse(verdict.reply).error, method).toEqual({
        code: -32000,
        message: expect.stringMatching(reason),
      });
    }
  });

  it('refuses a browser context with a proxy of its own or universal network access', () => {
    for (const params of [
      { proxyServer: 'direct://' },
      { proxyServer: '' },
      { proxyServer: 'socks5://127.0.0.1:1080', proxyBypassList: '*' },
      { proxyBypassList: '<-loopback>' },
      { originsWithUniversalNetworkAccess: ['https://x.test'] },
    ]) {
      const verdict = send('Target.createBrowserContext', params);
      expect('refuse' in verdict && JSON.parse(verdict.reply).error.message, JSON.stringify(params)).toMatch(
        /^Target\.createBrowserContext refused by the service: /,
      );
    }
    const plain = send('Target.createBrowserContext', { disposeOnDetach: true });
    expect('forward' in plain && JSON.parse(plain.forward).params).toEqual({ disposeOnDetach: true });
  });

  it('refuses the system tracing backend; a trace config streams', () => {
    expect('refuse' in send('Tracing.start', { tracingBackend: 'system' })).toBe(true);
    expect(
      'forward' in send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: ['devtools.timeline'] } }),
    ).toBe(true);
  });

  it('checks the command inside Target.sendMessageToTarget against the list too', () => {
    const inner = JSON.stringify({ id: 1, method: 'Tethering.bind', params: { port: 1 } });
    const verdict = send('Target.sendMessageToTarget', { targetId: 't', message: inner });
    expect('refuse' in verdict && verdict.refuse).toMatch(/Tethering\.bind: it binds ports/);
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
      ['Target.createBrowserContext', {}],
      ['Page.createIsolatedWorld', { frameId: 'F', worldName: 'utility', grantUniveralAccess: true }],
      [
        'Network.loadNetworkResource',
        { frameId: 'F', url: 'https://x.test/a.js', options: { disableCache: false, includeCredentials: true } },
      ],
      ['Page.printToPDF', { transferMode: 'ReturnAsStream' }],
      ['IO.read', { handle: 'h' }],
      // Page script and web content: what any page may run or be sent.
      ['Page.addScriptToEvaluateOnNewDocument', { source: 'window.x = 1', worldName: 'w' }],
      ['Runtime.addBinding', { name: 'report' }],
      ['Fetch.fulfillRequest', { requestId: 'r', responseCode: 200, body: 'PGgxPmhpPC9oMT4=' }],
      ['Page.clearCompilationCache', {}],
      ['LayerTree.makeSnapshot', { layerId: 'L' }],
    ] as const) {
      const verdict = send(method, params);
      expect('forward' in verdict && JSON.parse(verdict.forward), method).toEqual({ id: 7, method, params });
    }
  });

  it('answers a message that is not JSON without forwarding it', () => {
    expect('refuse' in guardCdpMessage('{"id":1,')).toBe(true);
  });
});
