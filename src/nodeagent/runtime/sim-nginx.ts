// The simulator's emulation of the `nginx` image (docs/nodeagent.md "What the
// simulator runs"): a container of an nginx image (any registry, any tag)
// with no command serves nginx's stock welcome page, as the real image does
// out of the box, so `kubectl port-forward pod/web 8080:80` and client test
// suites that fetch `<h1>Welcome to nginx!</h1>` work. It listens on the
// container's ports (kubelet's `io.kubernetes.container.ports` annotation;
// 80 when none) at the sandbox's own loopback address (sim-network.ts),
// writes nginx's access log lines to stdout, and stops with the container.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { CONTAINER_PORTS_ANNOTATION as PORTS_ANNOTATION, type ContainerConfig } from './types.js';
import type { ContainerLog } from './sim-logs.js';

const DEFAULT_VERSION = '1.27.3';

/** `nginx`, `nginx:1.25.3-alpine`, `docker.io/library/nginx@sha256:…` → the nginx version it serves; undefined: not nginx */
export function nginxVersion(image: string): string | undefined {
  const noDigest = image.split('@')[0]!; // split() has a first element
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  const repo = colon > slash ? noDigest.slice(0, colon) : noDigest;
  const tag = colon > slash ? noDigest.slice(colon + 1) : '';
  if (repo.slice(slash + 1) !== 'nginx') return undefined;
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(tag);
  return m ? `${m[1]}.${m[2]}.${m[3] ?? '0'}` : DEFAULT_VERSION;
}

/** the emulated nginx runs for this container: an nginx image and no command of its own */
export function emulatesNginx(config: ContainerConfig): boolean {
  return !config.command?.length && !config.args?.length && nginxVersion(config.image.image) !== undefined;
}

/** TCP container ports of the annotation, else [80] */
export function containerPorts(config: ContainerConfig): number[] {
  let ports: number[] = [];
  try {
    const list = JSON.parse(config.annotations?.[PORTS_ANNOTATION] ?? '[]') as { containerPort?: number; protocol?: string }[];
    ports = list.filter((p) => (p.protocol ?? 'TCP') === 'TCP' && Number.isInteger(p.containerPort)).map((p) => p.containerPort!);
  } catch {
    /* not JSON: the default */
  }
  return ports.length ? [...new Set(ports)] : [80];
}

const WELCOME = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
`;

const errorPage = (status: string, version: string) =>
  `<html>\r\n<head><title>${status}</title></head>\r\n<body>\r\n<center><h1>${status}</h1></center>\r\n<hr><center>nginx/${version}</center>\r\n</body>\r\n</html>\r\n`;

/** nginx's log time: 28/Nov/2026:13:52:56 +0000 */
function logTime(ms: number): string {
  const d = new Date(ms);
  const mon = d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${mon}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

function handler(version: string, log: ContainerLog, now: () => number) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!; // split() has a first element
    const method = req.method ?? 'GET';
    let status = 200;
    let body = WELCOME;
    if (method !== 'GET' && method !== 'HEAD') [status, body] = [405, errorPage('405 Not Allowed', version)];
    else if (path !== '/' && path !== '/index.html') [status, body] = [404, errorPage('404 Not Found', version)];
    const bytes = Buffer.from(body);
    res.statusCode = status;
    res.setHeader('Server', `nginx/${version}`);
    res.setHeader('Content-Type', 'text/html');
    res.setHeader('Content-Length', bytes.length);
    if (status === 200) {
      res.setHeader('Last-Modified', 'Tue, 26 Nov 2024 15:55:00 GMT');
      res.setHeader('ETag', '"6745ef54-267"');
      res.setHeader('Accept-Ranges', 'bytes');
    }
    res.end(method === 'HEAD' ? undefined : bytes);
    const ua = req.headers['user-agent'] ?? '-';
    log.write('stdout', Buffer.from(`${req.socket.remoteAddress ?? '-'} - - [${logTime(now())}] "${method} ${req.url ?? '/'} HTTP/${req.httpVersion}" ${status} ${method === 'HEAD' ? 0 : bytes.length} "-" "${ua}" "-"\n`));
  };
}

export interface EmulatedService {
  stop(): void;
}

/**
 * starts the emulated nginx on `address`. A port it cannot bind is logged as
 * nginx does (`[emerg] bind() … failed`) but does not end the container: the
 * cause is the host (a program on 0.0.0.0 of that port, or a user that may not
 * bind below 1024), not the pod, and a crash loop would hide that.
 */
export function startNginx(c: { config: ContainerConfig; log: ContainerLog }, address: string, now: () => number): EmulatedService {
  const version = nginxVersion(c.config.image.image) ?? DEFAULT_VERSION;
  const servers: Server[] = [];
  let stopped = false;
  const stop = () => {
    stopped = true;
    for (const s of servers) {
      s.close();
      s.closeAllConnections();
    }
  };
  c.log.write('stderr', Buffer.from(`nginx/${version}: start worker processes\n`));
  for (const port of containerPorts(c.config)) {
    const server = createServer(handler(version, c.log, now));
    servers.push(server);
    server.on('error', (e: NodeJS.ErrnoException) => {
      if (stopped) return;
      const why = e.code === 'EADDRINUSE' ? '98: Address already in use' : e.code === 'EACCES' ? '13: Permission denied' : e.message;
      c.log.write('stderr', Buffer.from(`nginx: [emerg] bind() to ${address}:${port} failed (${why}) [runtime-sim: the host refused the port; the container keeps running]\n`));
    });
    server.listen(port, address);
  }
  return { stop };
}
