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
