/**
 * Reads and validates the body of POST /v1/crawler/verify. Every problem
 * becomes an ApiError in the spec's shape (codes in docs/crawlers.md).
 */
import { readCappedBytes } from '../file-io/read-capped.ts';
import { ApiError } from '../api-error.ts';
import { formatIp, parseIp, plainAddress } from '../net/ip.ts';

/** Largest accepted body: an address plus a generous User-Agent. */
export const MAX_VERIFY_BODY_BYTES = 8 * 1024;

export interface VerifyRequest {
  /** Canonical address text (IPv4 for IPv4 written as IPv6, net/ip.ts plainAddress). */
  ip: string;
  /** The User-Agent exactly as supplied, null when absent. */
  userAgent: string | null;
}

function invalidRequest(reason: string, message: string, extra: Record<string, unknown> = {}): ApiError {
  return new ApiError('INVALID_REQUEST', message, { reason, ...extra });
}

function tooLarge(): ApiError {
  return invalidRequest('body_too_large', `Request body exceeds ${MAX_VERIFY_BODY_BYTES} bytes`, { max_bytes: MAX_VERIFY_BODY_BYTES });
}

/** True for `application/json` with optional parameters such as charset. */
export function isJsonContentType(header: string | null): boolean {
  if (!header) return false;
  return header.split(';')[0].trim().toLowerCase() === 'application/json';
}

/** Reads the body as UTF-8 text, refusing it as soon as it passes the limit. */
async function readLimitedText(request: Request): Promise<string> {
  const bytes = await readCappedBytes(request, MAX_VERIFY_BODY_BYTES);
  if (bytes === null) throw tooLarge();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalidRequest('invalid_json', 'Request body is not valid UTF-8 JSON');
  }
}

/** Parses the request into a validated VerifyRequest, or throws ApiError. */
export async function readVerifyRequest(request: Request): Promise<VerifyRequest> {
  const contentType = request.headers.get('content-type');
  if (!isJsonContentType(contentType)) {
    throw invalidRequest('unsupported_media_type', 'Content-Type must be application/json', {
      expected: 'application/json',
      provided: contentType,
    });
  }
  const text = await readLimitedText(request);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalidRequest('invalid_json', 'Request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('body_not_object', 'Request body must be a JSON object with an "ip" field');
  }
  const fields = body as Record<string, unknown>;
  if (!('ip' in fields) || fields.ip === undefined || fields.ip === null) {
    throw new ApiError('INVALID_IP', 'Missing "ip" in request body', { provided: null, reason: 'missing' });
  }
  if (typeof fields.ip !== 'string') {
    throw new ApiError('INVALID_IP', '"ip" must be a string', { provided: fields.ip, reason: 'not_a_string' });
  }
  const parsed = parseIp(fields.ip.trim());
  if (!parsed) throw new ApiError('INVALID_IP', 'Invalid IP address', { provided: fields.ip, reason: 'malformed' });
  const ua = fields.user_agent;
  if (ua !== undefined && ua !== null && typeof ua !== 'string') {
    throw invalidRequest('user_agent_not_string', '"user_agent" must be a string when given', { field: 'user_agent' });
  }
  const plain = plainAddress(parsed);
  return { ip: formatIp(plain.family, plain.value), userAgent: typeof ua === 'string' ? ua : null };
}
