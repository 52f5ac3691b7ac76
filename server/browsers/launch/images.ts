/**
 * Browser images the local driver offers: a name for a browser build on the host. The session's
 * `image` must be one of these (400 otherwise). `chromium` is the host's Chromium (CHROMIUM_PATH).
 */
export const browserImages = ['chromium'] as const;
export const defaultBrowserImage = 'chromium';

export type BrowserImage = (typeof browserImages)[number];

export function isKnownImage(image: string): image is BrowserImage {
  return (browserImages as readonly string[]).includes(image);
}
