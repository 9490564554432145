/**
 * A port for a server a test spawns and must know in advance (a pool's
 * workers and a waiting server share it): below Linux's ephemeral range
 * (32768+), so an outgoing connection of a busy machine never holds it.
 */
export function fixedTestPort(): number {
  return 10_000 + Math.floor(Math.random() * 20_000);
}
