/** A thin fetch wrapper for tests: JSON in and out, credentials per call. */

export type Credentials = { token?: string; apiKey?: string; cookie?: string; authorization?: string };

export type HttpResponse<T = any> = { status: number; body: T; headers: Headers; text: string };

export class HttpClient {
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async request<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; as?: Credentials } = {},
  ): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const as = options.as ?? {};
    if (as.token) headers.authorization = `Bearer ${as.token}`;
    if (as.apiKey) headers['x-api-key'] = as.apiKey;
    if (as.cookie) {
      headers.cookie = as.cookie;
      // As a browser on the service's own page sends it with every change (server/requestEdge.ts).
      if (!['GET', 'HEAD'].includes(method.toUpperCase())) headers.origin ??= new URL(this.baseUrl).origin;
    }
    if (as.authorization) headers.authorization = as.authorization;
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body, headers: response.headers, text };
  }

  get<T = any>(path: string, as?: Credentials) {
    return this.request<T>('GET', path, { as });
  }
  put<T = any>(path: string, body: unknown, as?: Credentials) {
    return this.request<T>('PUT', path, { body, as });
  }
  post<T = any>(path: string, body?: unknown, as?: Credentials) {
    return this.request<T>('POST', path, { body, as });
  }
  patch<T = any>(path: string, body: unknown, as?: Credentials) {
    return this.request<T>('PATCH', path, { body, as });
  }
  delete<T = any>(path: string, as?: Credentials) {
    return this.request<T>('DELETE', path, { as });
  }
}
