/**
 * Just enough of a browser for redirect flows: a cookie jar (host-only cookies, paths,
 * expiry; like a browser, ports do not separate cookies) and manual redirect following.
 */

type Cookie = { name: string; value: string; host: string; path: string; expires?: number };

export type Visit = { url: URL; status: number; headers: Headers; text: string };

export class Browser {
  cookies: Cookie[] = [];

  cookie(name: string) {
    return this.cookies.find((cookie) => cookie.name === name);
  }

  setCookie(name: string, value: string, host: string, path: string) {
    this.cookies = this.cookies.filter((cookie) => !(cookie.name === name && cookie.host === host && cookie.path === path));
    this.cookies.push({ name, value, host, path });
  }

  /** One request, no redirects followed; cookies sent and stored. */
  async request(url: URL, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Visit> {
    const now = Date.now();
    this.cookies = this.cookies.filter((cookie) => cookie.expires === undefined || cookie.expires > now);
    const matching = this.cookies.filter((cookie) => cookie.host === url.hostname && pathMatches(url.pathname, cookie.path));
    const headers: Record<string, string> = { ...init.headers };
    if (matching.length) headers.cookie = matching.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const header of response.headers.getSetCookie()) this.#store(url, header);
    return { url, status: response.status, headers: response.headers, text: await response.text() };
  }

  /**
   * Requests `url` and follows redirects. Stops, without requesting it, at the first URL for which
   * `stopBefore` is true (then `next` is that URL), or at the first answer that is no redirect.
   */
  async follow(
    start: URL | string,
    options: { stopBefore?: (url: URL) => boolean; method?: string; form?: Record<string, string> } = {},
  ): Promise<{ last: Visit; next?: URL }> {
    let url = new URL(start);
    let init: { method?: string; form?: Record<string, string> } = { method: options.method, form: options.form };
    for (let hop = 0; hop < 20; hop++) {
      const visit = await this.request(url, init);
      const location = visit.headers.get('location');
      if (visit.status < 300 || visit.status >= 400 || !location) return { last: visit };
      const next = new URL(location, url);
      if (options.stopBefore?.(next)) return { last: visit, next };
      url = next;
      init = {};
    }
    throw new Error('too many redirects');
  }

  #store(url: URL, header: string) {
    const [pair = '', ...attributes] = header.split(';').map((part) => part.trim());
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    let path = url.pathname.slice(0, url.pathname.lastIndexOf('/')) || '/';
    let expires: number | undefined;
    for (const attribute of attributes) {
      const [key = '', ...rest] = attribute.split('=');
      const attributeValue = rest.join('=');
      if (key.toLowerCase() === 'path') path = attributeValue || '/';
      if (key.toLowerCase() === 'max-age') expires = Date.now() + Number(attributeValue) * 1000;
      if (key.toLowerCase() === 'expires' && expires === undefined) expires = Date.parse(attributeValue);
    }
    this.cookies = this.cookies.filter((cookie) => !(cookie.name === name && cookie.host === url.hostname && cookie.path === path));
    if (expires === undefined || expires > Date.now()) this.cookies.push({ name, value, host: url.hostname, path, expires });
  }
}

function pathMatches(requestPath: string, cookiePath: string) {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}
