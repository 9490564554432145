/**
 * Reading a request or response body with a size cap: refused as soon as the
 * declared length or the bytes streamed so far pass the cap (a declared
 * Content-Length is not trusted), so an oversized body is never buffered.
 */

/** The body's bytes, or null when it is larger than `maxBytes` (the stream is then cancelled). */
export async function readCappedBytes(message: Request | Response, maxBytes: number): Promise<Uint8Array | null> {
  const declared = message.headers.get('content-length');
  const body = message.body;
  if (declared !== null && Number(declared) > maxBytes) {
    await body?.cancel().catch(() => undefined);
    return null;
  }
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
