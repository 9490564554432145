/** A minimal browser-like HTTP client for tests: one cookie jar, manual redirects. */

export interface Hop {
  url: string;
  status: number;
  setCookies: string[];
}

/** Cookie-keeping client (cookies are per name; tests use one loopback host). */
export class TestClient {
  readonly jar = new Map<string, string>();

  /** Sends a request with the jar's cookies, storing any Set-Cookie answers. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size > 0 && !headers.has('cookie')) headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }

  /** Follows redirects (GET) from `url`, recording every hop; returns the final response and the hops. */
  async follow(url: string, init: RequestInit = {}, max = 10): Promise<{ res: Response; hops: Hop[] }> {
    const hops: Hop[] = [];
    let current = url;
    for (let i = 0; i < max; i++) {
      const res = await this.fetch(current, i === 0 ? init : { headers: init.headers });
      hops.push({ url: current, status: res.status, setCookies: res.headers.getSetCookie() });
      const loc = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !loc) return { res, hops };
      await res.body?.cancel();
      current = new URL(loc, current).toString();
    }
    throw new Error('too many redirects');
  }
}
