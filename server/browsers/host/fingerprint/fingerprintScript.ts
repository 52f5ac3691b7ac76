import type { Screen, StoredFingerprint } from '../../../../db/entities/BrowserSession.ts';

/**
 * What the injected script makes a page or worker see, beyond what the launch flags already set:
 * the session's generated part (absent for a browser not launched for a session's start) and its screen.
 */
export type PageFingerprint = Partial<StoredFingerprint> & { screen: Screen };

/**
 * The script run in the main world of every document and worker of a `desktop` browser before its
 * own script (./fingerprintInjector.ts). It is written to run in a window and in a worker alike,
 * and to leave as little trace as the platform allows:
 * - a patched getter or method is a Proxy of the native one: its name, length and
 *   `Function.prototype.toString` (itself patched the same way) are the native ones, and it still
 *   throws "Illegal invocation" on a foreign receiver, since the native one is called first;
 * - nothing is added to the global object or to any prototype.
 * The values are the session's stored ones, so every frame and worker of it tells the same story.
 */
export function fingerprintScript(fingerprint: PageFingerprint): string {
  return `(${inject.toString()})(${JSON.stringify(fingerprint)});`;
}

/** Runs in the page (serialised by `fingerprintScript`): no closure over anything of this module. */
function inject(fp: PageFingerprint) {
  const scope = globalThis as unknown as Record<string, { prototype?: object } | undefined>;
  const apply = Reflect.apply;
  const describe = Object.getOwnPropertyDescriptor;
  const define = Object.defineProperty;
  const originals = new WeakMap<object, object>();
  const nativeToString = Function.prototype.toString;
  const maskedToString = new Proxy(nativeToString, {
    apply: (target, self, args) => apply(target, originals.get(self) ?? self, args),
  });
  originals.set(maskedToString, nativeToString);
  define(Function.prototype, 'toString', { ...describe(Function.prototype, 'toString'), value: maskedToString });

  const patchGetter = (owner: { prototype?: object } | undefined, name: string, value: unknown) => {
    const proto = owner?.prototype;
    const descriptor = proto && describe(proto, name);
    if (!proto || !descriptor?.get) return;
    const get = new Proxy(descriptor.get, {
      apply: (target, self, args) => {
        apply(target, self, args);
        return value;
      },
    });
    originals.set(get, descriptor.get);
    define(proto, name, { ...descriptor, get });
  };
  const patchMethod = (owner: { prototype?: object } | undefined, name: string, replace: (result: unknown, args: unknown[]) => unknown) => {
    const proto = owner?.prototype;
    const descriptor = proto && describe(proto, name);
    if (!proto || typeof descriptor?.value !== 'function') return;
    const method = new Proxy(descriptor.value, {
      apply: (target, self, args: unknown[]) => replace(apply(target, self, args), args),
    });
    originals.set(method, descriptor.value);
    define(proto, name, { ...descriptor, value: method });
  };

  for (const navigator of [scope.Navigator, scope.WorkerNavigator]) {
    if (fp.hardwareConcurrency !== undefined) patchGetter(navigator, 'hardwareConcurrency', fp.hardwareConcurrency);
    if (fp.deviceMemory !== undefined) patchGetter(navigator, 'deviceMemory', fp.deviceMemory);
  }

  // WEBGL_debug_renderer_info's UNMASKED_VENDOR_WEBGL and UNMASKED_RENDERER_WEBGL.
  const webgl = fp.webgl;
  const unmasked = (result: unknown, args: unknown[]) =>
    args[0] === 0x9245 ? webgl?.vendor : args[0] === 0x9246 ? webgl?.renderer : result;
  if (webgl)
    for (const context of [scope.WebGLRenderingContext, scope.WebGL2RenderingContext]) patchMethod(context, 'getParameter', unmasked);

  // A maximised window on the session's screen: the window is never larger than the screen.
  if (scope.Screen && scope.window) {
    patchGetter(scope.Screen, 'availWidth', fp.screen.width);
    patchGetter(scope.Screen, 'availHeight', fp.screen.height);
    const win = globalThis as unknown as Window;
    for (const [name, size] of [
      ['outerWidth', fp.screen.width],
      ['outerHeight', fp.screen.height],
    ] as const) {
      const descriptor = describe(win, name);
      if (!descriptor?.get) continue;
      const native = descriptor.get;
      const get = new Proxy(native, { apply: (target, self, args) => Math.min(apply(target, self, args) as number, size) });
      originals.set(get, native);
      define(win, name, { ...descriptor, get });
    }
  }
}
