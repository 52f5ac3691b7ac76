import { launchChromium } from './chromium.ts';
import { startTestSite } from './pages.ts';

/**
 * One page of a test site whose markup the test sets, opened in a headless Chromium of the test's
 * own: `show` serves `body` at `path` (wrapped by `document`) and opens it.
 */
export async function openServedPage(path: string, document: (body: string) => string) {
  let body = '';
  const site = await startTestSite({
    [path]: (_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(document(body));
    },
  });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  return {
    page,
    url: site.url,
    /** Serves `html` at the path and opens it, with `query` (`?page=2`) when given. */
    async show(html: string, query = '') {
      body = html;
      await page.goto(`${site.url}${path}${query}`);
    },
    async close() {
      await browser.close();
      await site.close();
    },
  };
}
