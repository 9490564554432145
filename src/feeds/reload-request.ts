/** Asking a running server to swap in the new index: POST /reload with the admin token. */

export interface ReloadOutcome {
  ok: boolean;
  status: number;
  /** The server's answer (JSON text) or the network error. */
  detail: string;
}

/** POSTs to `url` (e.g. http://127.0.0.1:8080/reload) with `Authorization: Bearer <token>`; never throws. */
export async function requestReload(url: string, token: string | null, timeoutMs = 60_000): Promise<ReloadOutcome> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    const res = await fetch(url, { method: 'POST', headers, signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.text();
    return { ok: res.status === 200, status: res.status, detail: body.slice(0, 2000) };
  } catch (e) {
    return { ok: false, status: 0, detail: (e as Error).message };
  }
}
