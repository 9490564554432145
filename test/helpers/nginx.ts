/**
 * A real nginx (Debian's nginx-light, installed by .ci/run) on 127.0.0.1
 * serving one folder as static files, with its own prefix, config and logs
 * in a temp folder (its workers run as the test's user, so a private temp
 * folder is readable); ETag, Last-Modified and conditional GETs are nginx's own.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixedTestPort } from './fixed-port.ts';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => Bun.file(p).size > 0) ?? null;

export interface Nginx {
  url: string;
  port: number;
  /** The request lines logged so far (`METHOD path status`), every answer already received included. */
  requests(): Promise<string[]>;
  stop(): Promise<void>;
}

/** A path no test publishes: the log barrier of requests(). */
const BARRIER_PATH = '/__log-barrier-';

/** Starts nginx serving `root` on a free port of 127.0.0.1; resolves once it answers. */
export async function startNginx(root: string, work: string): Promise<Nginx> {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install nginx-light)');
  mkdirSync(work, { recursive: true });
  const port = fixedTestPort();
  const access = join(work, 'access.log');
  writeFileSync(access, '');
  writeFileSync(
    join(work, 'nginx.conf'),
    `daemon off;
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${join(work, 'nginx.pid')};
error_log ${join(work, 'error.log')};
events { worker_connections 64; }
http {
  access_log ${access};
  client_body_temp_path ${work};
  proxy_temp_path ${work};
  fastcgi_temp_path ${work};
  uwsgi_temp_path ${work};
  scgi_temp_path ${work};
  types { application/json json; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${port};
    root ${root};
  }
}
`,
  );
  const proc = Bun.spawn([NGINX, '-p', work, '-c', join(work, 'nginx.conf'), '-e', join(work, 'error.log')], { stdout: 'ignore', stderr: 'pipe' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`nginx exited: ${await new Response(proc.stderr).text()}`);
    if (await fetch(`${url}/`).then(() => true, () => false)) break;
    await Bun.sleep(50);
  }
  const lines = () =>
    readFileSync(access, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const m = /"(\w+) (\S+) [^"]*" (\d{3})/.exec(l);
        return m ? `${m[1]} ${m[2]} ${m[3]}` : l;
      });
  let barriers = 0;
  return {
    url,
    port,
    async requests() {
      // nginx logs a request after its answer has gone, so a client can read the log before the line of the answer it
      // just got. Its one worker logs requests in the order it finishes them: once a later barrier request is in the
      // log, every earlier one is.
      const barrier = `GET ${BARRIER_PATH}${++barriers} 404`;
      await fetch(`${url}${BARRIER_PATH}${barriers}`).then((r) => r.arrayBuffer());
      for (let i = 0; i < 200 && !lines().includes(barrier); i++) await Bun.sleep(10);
      return lines().filter((l) => !l.startsWith(`GET ${BARRIER_PATH}`));
    },
    async stop() {
      proc.kill('SIGQUIT');
      await proc.exited;
    },
  };
}
