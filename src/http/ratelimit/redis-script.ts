/**
 * The Lua token-bucket step run atomically inside Redis: the same GCRA step
 * as gcra.ts `step`, so N server processes sharing one Redis enforce one
 * limit. One key per bucket holding its tat (ms, as text); the key expires
 * exactly when the bucket is full again, so idle buckets cost Redis nothing.
 *
 * KEYS[1] bucket key; ARGV[1] emission interval T (ms); ARGV[2] window W (ms);
 * ARGV[3] epsilon (ms); ARGV[4] caller's clock in ms, or "" to use Redis's
 * own TIME (the default: one clock for every process, so clock skew between
 * servers cannot hand out extra tokens).
 * Returns {allowed 0|1, tat as text (Redis would truncate a Lua float),
 * now as an integer (whole ms: TIME is floored, an injected clock is sent
 * floored)}.
 */
export const TOKEN_BUCKET_LUA = `
local T = tonumber(ARGV[1])
local W = tonumber(ARGV[2])
local eps = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat or tat < now then tat = now end
-- A tat further than one window ahead can only come from a clock that went back: cap the debt.
if tat > now + W then tat = now + W end
local nxt = tat + T
if nxt - now > W + eps then
  return {0, string.format('%.17g', tat), now}
end
local text = string.format('%.17g', nxt)
redis.call('SET', KEYS[1], text, 'PX', math.max(1, math.ceil(nxt - now)))
return {1, text, now}
`;
