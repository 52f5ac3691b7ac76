import { CdpClient } from '../../cdp/cdpClient.ts';
import { fingerprintScript, type PageFingerprint } from './fingerprintScript.ts';

/**
 * The host's own CDP connection to a `desktop` browser that puts its fingerprint into every target
 * before the target runs anything: pages, cross-site iframes (out of process), dedicated, shared and
 * service workers, whoever opened them (the host's Playwright, a remoteUrl client, a page).
 *
 * It auto-attaches to the browser with `waitForDebuggerOnStart`, and again to each target it
 * attaches (flat sessions), so each new target waits for it: a document target gets the script
 * (`Page.addScriptToEvaluateOnNewDocument`, main world, every frame of it) and the session's
 * locale for `Intl`; a worker gets the script evaluated before its own; then the target runs.
 * A warm browser's targets wait until `apply` says whose browser it is (its adoption); a target
 * that was running before the connection (the first tab) gets the script from its next document.
 */

const AUTO_ATTACH = {
  autoAttach: true,
  waitForDebuggerOnStart: true,
  flatten: true,
  filter: [{ type: 'browser', exclude: true }, { type: 'tab', exclude: true }, {}],
};

/** How long a worker's first script is waited for before the injector lets go of it. */
const WORKER_SCRIPT_WAIT_MS = 10_000;

const WORKERS = new Set(['worker', 'shared_worker', 'service_worker']);

type Attached = { sessionId: string; waitingForDebugger: boolean; targetInfo: { type: string; targetId: string } };

export class FingerprintInjector {
  readonly #client: CdpClient;
  #fingerprint: { script: string; locale: string } | undefined;
  /** Targets that attached before `apply`: they wait, paused, for it. */
  #held: Attached[] = [];

  private constructor(client: CdpClient) {
    this.#client = client;
    client.on('Target.attachedToTarget', (attached: Attached) => {
      if (this.#fingerprint) void this.#prepare(attached, this.#fingerprint);
      else this.#held.push(attached);
    });
  }

  /** Connects to the browser's DevTools endpoint (the host's own, `CdpMux`) and starts holding new targets. */
  static async attach(cdpEndpoint: string) {
    const client = await CdpClient.connect(cdpEndpoint);
    const injector = new FingerprintInjector(client);
    await client.send('Target.setAutoAttach', AUTO_ATTACH);
    return injector;
  }

  /** Whose browser it is: from now on every target gets `fingerprint`, those held so far first. */
  apply(fingerprint: PageFingerprint, locale: string) {
    if (this.#fingerprint) return;
    this.#fingerprint = { script: fingerprintScript(fingerprint), locale };
    const held = this.#held;
    this.#held = [];
    for (const attached of held) void this.#prepare(attached, this.#fingerprint);
  }

  close() {
    this.#client.close();
  }

  /**
   * A worker has no global scope to evaluate in while it waits for the debugger: it is paused
   * again just before its first script runs (an instrumentation breakpoint), the fingerprint is
   * evaluated there, and the debugger let go of it.
   */
  async #beforeFirstScript(sessionId: string, script: string) {
    const send = (method: string, params: Record<string, unknown> = {}) => this.#client.send(method, params, sessionId);
    let onPaused: (params: unknown, from?: string) => void = () => {};
    const paused = new Promise<void>((resolve) => {
      onPaused = (_params, from) => {
        if (from === sessionId) resolve();
      };
      this.#client.on('Debugger.paused', onPaused);
    });
    // A worker that never runs a script (its fetch failed) is not waited for.
    const gaveUp = new Promise<void>((resolve) => setTimeout(resolve, WORKER_SCRIPT_WAIT_MS).unref());
    await Promise.all([
      send('Debugger.enable'),
      send('Debugger.setInstrumentationBreakpoint', { instrumentation: 'beforeScriptExecution' }),
      send('Runtime.runIfWaitingForDebugger'),
    ]);
    await Promise.race([paused, gaveUp]);
    this.#client.off('Debugger.paused', onPaused);
    await send('Runtime.evaluate', { expression: script, silent: true }).catch(() => {});
    await send('Debugger.disable');
  }

  async #prepare(attached: Attached, fingerprint: { script: string; locale: string }) {
    const { sessionId, targetInfo } = attached;
    const send = (method: string, params: Record<string, unknown> = {}) => this.#client.send(method, params, sessionId);
    try {
      if (WORKERS.has(targetInfo.type)) {
        await this.#beforeFirstScript(sessionId, fingerprint.script);
        await send('Target.setAutoAttach', AUTO_ATTACH).catch(() => {});
      } else if (targetInfo.type === 'page' || targetInfo.type === 'iframe') {
        // Sent at once, without waiting between them (a target handles its commands in order),
        // and all answered before the target may run: it waits two round trips, not five.
        await Promise.all([
          // Chromium runs a session's scripts on new documents only while its Page domain is on.
          send('Page.enable'),
          send('Page.addScriptToEvaluateOnNewDocument', { source: fingerprint.script, runImmediately: true }),
          send('Emulation.setLocaleOverride', { locale: fingerprint.locale }).catch(() => {}),
          // Its own iframes out of process and its workers wait for us in turn.
          send('Target.setAutoAttach', AUTO_ATTACH).catch(() => {}),
        ]);
      }
    } catch {
      // The target went away meanwhile, or is of a kind without these domains: nothing to patch.
    }
    if (attached.waitingForDebugger) await send('Runtime.runIfWaitingForDebugger').catch(() => {});
  }
}
