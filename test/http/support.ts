/** Small helpers shared by the HTTP acceptance tests (loopback only). */
import { expect } from 'bun:test';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON (throws when it is not JSON). */
  json<T = Record<string, any>>(): T;
}

/** Performs a request against the test server and reads the whole body. */
export async function call(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(base + path, { ...init, redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: <T>() => JSON.parse(text) as T };
}

/** Asserts an answer is the spec's JSON error (section 7) with this status and code; returns its details. */
export function expectError(a: Answer, status: number, code: string): Record<string, any> {
  expect({ status: a.status, code: safeCode(a.text) }).toEqual({ status, code });
  expect(a.headers.get('content-type') ?? '').toContain('application/json');
  const body = a.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'details', 'error']);
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  expect(typeof body.details).toBe('object');
  expect(body.details).not.toBeNull();
  expect(Array.isArray(body.details)).toBe(false);
  return body.details;
}

function safeCode(text: string): unknown {
  try {
    return (JSON.parse(text) as { code?: unknown }).code;
  } catch {
    return `not JSON: ${text.slice(0, 80)}`;
  }
}

/** Env for servers that take many requests: rate limits off (their behaviour has its own tests). */
export const NO_LIMITS = { IPINTEL_RATE_LIMITS: 'off' } as const;
