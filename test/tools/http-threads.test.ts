/** The per-thread counters http-threads.bench.ts reads from /proc: a task's stat and status parsed by field number. */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { parseThreadCounters } from '../../tools/bench/http-threads.bench.ts';

test('fields after a thread name holding spaces and parentheses are counted from the last parenthesis', () => {
  // proc(5): pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const stat = '4242 (ollector (x) T) S 1 1 1 0 -1 4194368 77 0 3 0 1234 567 0 0 20 0 9 0 100 0 0';
  const status = 'Name:\tx\nvoluntary_ctxt_switches:\t42\nnonvoluntary_ctxt_switches:\t7\n';
  expect(parseThreadCounters(stat, status)).toEqual({ name: 'ollector (x) T', minorFaults: 77, user: 1234, system: 567, voluntarySwitches: 42, involuntarySwitches: 7 });
});

test("this thread's own counters read back as numbers that agree with process.cpuUsage", () => {
  const t = parseThreadCounters(readFileSync('/proc/thread-self/stat', 'utf8'), readFileSync('/proc/thread-self/status', 'utf8'));
  for (const v of Object.values(t).slice(1)) expect(Number.isInteger(v) && v >= 0).toBe(true);
  const usage = process.cpuUsage();
  // Ticks of 10 ms; the main thread did nearly all of this process's work so far.
  expect(t.user + t.system).toBeLessThanOrEqual(Math.ceil((usage.user + usage.system) / 10_000) + 1);
});
