/**
 * What a `Browser.setDownloadBehavior` / `Page.setDownloadBehavior` may ask, whoever asks (a
 * remoteUrl client through the CDP guard, the host's own Playwright through the browser's CDP
 * pipe): to allow downloads or to deny them, never where they go. Pure: the api's guard
 * (server/http/browsers/cdpGuard.ts) and the browser's host (server/browsers/host/downloads/) both
 * apply it.
 *
 * `allow`, `allowAndName` and `default` (Chromium's default would save under the browser's HOME,
 * untracked) become `allowAndName`: Chromium names each file by its download's GUID, so a site's
 * suggested name never becomes a path. Anything else becomes `deny`. The client's `downloadPath`
 * is dropped; `folder`, when given (on the host: the browser's own downloads folder), takes its place.
 */
export function ruleDownloadBehavior(params: Record<string, unknown>, folder?: string) {
  const allow = params.behavior === 'allow' || params.behavior === 'allowAndName' || params.behavior === 'default';
  params.behavior = allow ? 'allowAndName' : 'deny';
  delete params.downloadPath;
  if (allow && folder) params.downloadPath = folder;
}

/** The methods `ruleDownloadBehavior` applies to. */
export const downloadBehaviorMethods: ReadonlySet<string> = new Set(['Browser.setDownloadBehavior', 'Page.setDownloadBehavior']);

/** The rule as the guard's table shows it (docs/browsers.md). */
export const downloadBehaviorRule =
  '`allow`, `allowAndName` and `default` become `allowAndName`, anything else `deny`; `downloadPath` dropped (the browser’s host puts its own downloads folder there)';
