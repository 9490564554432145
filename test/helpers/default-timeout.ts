/**
 * Preloaded before every test file (bunfig.toml): tests start real servers
 * and builds on loopback, which take longer than Bun's 5 s default on a
 * loaded machine; 60 s keeps a hung test bounded. (Bun 1.4 ignores a
 * `timeout` key under `[test]` in bunfig.toml: this is the way that works.)
 */
import { setDefaultTimeout } from 'bun:test';

setDefaultTimeout(60_000);
