/**
 * What Chromium needs on these machines, for the service's browsers and for every other Chromium
 * the tests and benchmarks launch: no sandbox (it runs as root), no GPU, no calls home.
 */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * The switches playwright-core (1.65) gives every headless Chromium it launches (its
 * `chromiumSwitches` and headless switches, without the feature lists, which follow, and without
 * `--no-sandbox`). The host launches Chromium itself, so that its CDP pipe is the host's to serve,
 * and passes these so that a browser behaves as Playwright expects (no throttled timers in
 * background tabs, no popup blocking, no first-run UI). test/browsers/host/chromium-flags.test.ts compares them
 * with what Playwright passes.
 */
export const PLAYWRIGHT_SWITCHES = [
  '--disable-field-trial-config',
  '--disable-background-networking',
  '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows',
  '--disable-back-forward-cache',
  '--disable-breakpad',
  '--disable-component-extensions-with-background-pages',
  '--disable-component-update',
  '--no-default-browser-check',
  '--disable-default-apps',
  '--disable-dev-shm-usage',
  '--disable-edgeupdater',
  '--disable-extensions',
  '--allow-pre-commit-input',
  '--disable-hang-monitor',
  '--disable-ipc-flooding-protection',
  '--disable-popup-blocking',
  '--disable-prompt-on-repost',
  '--disable-renderer-backgrounding',
  '--disable-updater-scheduler',
  '--force-color-profile=srgb',
  '--metrics-recording-only',
  '--no-first-run',
  '--password-store=basic',
  '--use-mock-keychain',
  '--no-service-autorun',
  '--disable-search-engine-choice-screen',
  '--unsafely-disable-devtools-self-xss-warnings',
  '--enable-unsafe-swiftshader',
  '--edge-skip-compat-layer-relaunch',
  '--disable-stack-profiler',
  '--disable-infobars',
  '--disable-sync',
  '--do-not-de-elevate',
  '--headless',
  '--hide-scrollbars',
  '--mute-audio',
  '--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4',
];

type Features = { disabled: readonly string[]; enabled: readonly string[] };

/**
 * The features playwright-core (1.65) switches off and on for every Chromium it launches (its
 * `chromiumSwitches`). Chromium reads only the last `--disable-features` and `--enable-features` of
 * its command line, so any of ours would replace Playwright's lists: `withFeatures` repeats them.
 * test/browsers/host/chromium-flags.test.ts compares them with what Playwright passes, so an upgrade that
 * changes them fails there.
 */
export const PLAYWRIGHT_FEATURES: Features = {
  disabled: [
    'AvoidUnnecessaryBeforeUnloadCheckSync',
    'DestroyProfileOnBrowserClose',
    'HttpsUpgrades',
    'HttpsFirstBalancedModeAutoEnable',
    'LensOverlay',
    'MediaRouter',
    'PaintHolding',
    'ThirdPartyStoragePartitioning',
    'AvoidCorsURLLoaderRestartOnRedirect',
    'TcpPortRandomizationWin',
    'OptimizationHints',
    'NetworkTimeServiceQuerying',
    'AimEnabled',
    'PreconnectToSearch',
    'msForceBrowserSignIn',
    'msEdgeUpdateLaunchServicesPreferredVersion',
  ],
  enabled: ['CDPScreenshotNewSurface', 'SkipListAccountsWithoutGaiaCookies'],
};

/**
 * Less memory per browser, nothing a page can tell (bench/browser-density.ts compares a browser with
 * and without them):
 * - headless Chromium preloads the omnibox popup's WebUI in a renderer of its own (about 35 MB of
 *   private memory), though a headless browser never shows an omnibox;
 * - the network service runs in the browser process instead of a utility process of its own
 *   (about 15 MB). A crash of it then ends the browser, which its workflow notices like any exit.
 */
export const LEAN_FEATURES: Features = {
  disabled: ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'],
  enabled: ['NetworkServiceInProcess2'],
};

const featureSwitch = /^--(enable|disable)-features=(.*)$/;

/**
 * `args` with a single `--disable-features` and `--enable-features` at the end, carrying `base`'s
 * features and then those of every such switch in `args` (a session's own flags among them), a
 * later mention of a feature winning over an earlier one. Without it, a session's
 * `--disable-features=X` would silently turn Playwright's and the host's features back on.
 */
export function withFeatures(args: readonly string[], base: readonly Features[]): string[] {
  // Feature name → enabled?, in first-mention order; a value may carry `:params` or `<trial`.
  const states = new Map<string, { enabled: boolean; spec: string }>();
  const mention = (spec: string, enabled: boolean) => {
    const name = spec.split(/[:<]/)[0] as string;
    if (!name) return;
    states.delete(name);
    states.set(name, { enabled, spec });
  };
  for (const features of base) {
    for (const spec of features.disabled) mention(spec, false);
    for (const spec of features.enabled) mention(spec, true);
  }
  const rest: string[] = [];
  for (const arg of args) {
    const match = featureSwitch.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    for (const spec of (match[2] as string).split(',')) mention(spec.trim(), match[1] === 'enable');
  }
  const list = (enabled: boolean) => [...states.values()].filter((state) => state.enabled === enabled).map((state) => state.spec);
  const disabled = list(false);
  const enabled = list(true);
  return [
    ...rest,
    ...(disabled.length ? [`--disable-features=${disabled.join(',')}`] : []),
    ...(enabled.length ? [`--enable-features=${enabled.join(',')}`] : []),
  ];
}
