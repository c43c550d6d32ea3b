// The agent's HTTPS server (spec 002 §4.1, §7): `/healthz`, kubelet's
// `/metrics/resource` and `/stats/summary` (resource-stats.ts), the
// checkpoint endpoint `POST /checkpoint/{namespace}/{pod}/{container}?timeout=`
// behind the feature gate ContainerCheckpoint (beta, on by default), and the
// streaming endpoints of streaming/routes.ts (logs, exec, attach, port-forward;
// WebSockets and SPDY/3.1 arrive as HTTP upgrades).
// Errors are Kubernetes Status objects (the body shape is not given by §7).

import type { Socket } from 'node:net';
import type { Clock } from './clock.js';
import { chmod, readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { join } from 'node:path';
import type { ApiClient, KubeObject } from './api-client.js';
import type { NodeAgentConfig } from './config/load.js';
import { featureEnabled } from './features.js';
import { LABEL_CONTAINER, LABEL_POD_UID } from './pod-spec.js';
import { RuntimeCallError, type RuntimeClient } from './runtime/client.js';
import { authenticate, authorize, type Caller } from './server-auth.js';
import { ResourceStats, type ResourceSummary, resourceMetricsText, summaryJson } from './resource-stats.js';
import { servingPair } from './serving-cert.js';
import { parseStreamPath, prepareStream, protocolsFor, serveStreamHttp, STREAM_PATHS, type PreparedStream, type StreamContext } from './streaming/routes.js';
import { socketBytes } from './streaming/byte-conn.js';
import { HttpError } from './streaming/target.js';

export interface AgentServerOptions {
  config: NodeAgentConfig;
  /**
   * the kubeconfig's cluster CA: the client CA when `authentication.x509.clientCAFile` is unset, as
   * kubeadm points a kubelet's clientCAFile at the cluster CA — so the API server's kubelet-client
   * certificate is accepted without a configuration file (docs/nodeagent.md "Streams")
   */
  clusterCaPem?: string | undefined;
  rootDir: string;
  certDir: string;
  nodeName: string;
  domain: string;
  api?: ApiClient;
  runtime: RuntimeClient;
  healthy: () => boolean;
  pods: () => KubeObject[];
  log: (m: string) => void;
  /** the agent's clock port (clock.ts): checkpoint names, serving-cert validity */
  clock: Clock;
  /** where the host's /proc is (tests; default /proc): node figures of /metrics/resource and /stats/summary */
  procRoot?: string;
}

/** kubelet's paths and the node sub-resources that authorize them (kube's NodeAuthorizer attributes) */
const USAGE_PATHS: Record<string, 'metrics' | 'stats'> = { '/metrics/resource': 'metrics', '/stats/summary': 'stats', '/stats/summary/': 'stats' };

export interface AgentServer {
  port: number;
  close(): Promise<void>;
}

const REASONS: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 500: 'InternalError' };

/** the upgrade token of kube's SPDY streams (httpstream/spdy) */
const SPDY_UPGRADE = 'SPDY/3.1';

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
const status = (code: number, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: REASONS[code] ?? 'InternalError', code });
function fail(res: ServerResponse, code: number, message: string): void {
  send(res, code, status(code, message));
}
/** an upgrade refused before the handshake: a plain HTTP answer on the raw socket */
function failUpgrade(socket: Duplex, code: number, message: string): void {
  const body = JSON.stringify(status(code, message));
  socket.end(`HTTP/1.1 ${code} ${REASONS[code] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
/** the kubelet's verbs: by HTTP method */
const VERBS: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** `<pod>_<namespace>`, as Kubernetes writes a pod's full name */
export const podFullName = (ns: string, pod: string) => `${pod}_${ns}`;
/** RFC 3339 without characters that are awkward in file names' shells is not required: Kubernetes uses plain RFC 3339 */
const stamp = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export async function startAgentServer(o: AgentServerOptions): Promise<AgentServer> {
  const c = o.config;
  const pair = await servingPair(c.tlsCertFile, c.tlsPrivateKeyFile, o.certDir, [o.nodeName, 'localhost', '127.0.0.1'], o.clock.now());
  const ca = c.authentication.x509.clientCAFile ? await readFile(c.authentication.x509.clientCAFile, 'utf8') : o.clusterCaPem;
  const server: Server = createServer({ cert: pair.certPem, key: pair.keyPem, ca, requestCert: !!ca, rejectUnauthorized: false }, (req, res) => {
    handle(req, res).catch((e: unknown) => {
      o.log(`server: ${(e as Error).message}`);
      if (!res.headersSent) fail(res, 500, (e as Error).message);
    });
  });

  const stats = new ResourceStats({ nodeName: o.nodeName, runtime: o.runtime, clock: o.clock, ...(o.procRoot ? { procRoot: o.procRoot } : {}) });
  const streams: StreamContext = { runtime: o.runtime, nodeName: o.nodeName, pods: o.pods, log: o.log, clock: o.clock };
  // ws 8.13 crashes on a request with more headers than maxHeadersCount (CVE-2024-37890); 0 = no limit
  server.maxHeadersCount = 0;
  // the subprotocol is chosen before the handshake (upgrade below) and looked up here
  const chosenProtocol = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024, handleProtocols: (_offered, req) => chosenProtocol.get(req) ?? false });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    upgrade(req, socket, head).catch((e: unknown) => {
      o.log(`server: ${(e as Error).message}`);
      failUpgrade(socket, 500, (e as Error).message);
    });
  });

  /** exec, attach and port-forward: checked as HTTP, then the WebSocket or SPDY/3.1 handshake (streaming/routes.ts) */
  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://agent');
    const who = await authenticate(req, c, o.api, o.domain, o.clock.now());
    if (!who.ok) return failUpgrade(socket, 401, `Unauthorized: ${who.message}`);
    const kind = url.pathname.split('/')[1] ?? '';
    const to = (req.headers.upgrade ?? '').toLowerCase();
    const spdy = to === SPDY_UPGRADE.toLowerCase();
    if (!STREAM_PATHS.has(kind) || (to !== 'websocket' && !spdy)) {
      return failUpgrade(socket, 400, `${url.pathname} cannot be upgraded to ${req.headers.upgrade ?? 'nothing'}: only exec, attach and portForward speak WebSocket or ${SPDY_UPGRADE}`);
    }
    const verb = VERBS[req.method ?? 'GET'] ?? 'get';
    const z = await authorize(who.user, { verb, subresource: 'proxy', nodeName: o.nodeName }, c, o.api, o.domain);
    if (!z.allowed) return failUpgrade(socket, 403, `Forbidden (user=${who.user.username}, verb=${verb}, resource=nodes, subresource=proxy)${z.reason ? `: ${z.reason}` : ''}`);
    let run: PreparedStream;
    let protocol: string | undefined;
    try {
      const t = parseStreamPath(url.pathname);
      // the target is checked first, so that a client offering no protocol we speak still learns
      // what is wrong with it; nothing runs yet
      run = await prepareStream(streams, t, url);
      const header = spdy ? req.headers['x-stream-protocol-version'] : req.headers['sec-websocket-protocol'];
      const offered = (Array.isArray(header) ? header.join(',') : String(header ?? '')).split(',').map((p) => p.trim()).filter(Boolean);
      const ours = protocolsFor(t, spdy);
      // the client's order of preference decides, as kube's wsstream and httpstream.Handshake do
      protocol = offered.find((p) => ours.includes(p));
      if (spdy && offered.length === 0) throw new HttpError(400, 'unable to upgrade: X-Stream-Protocol-Version is required');
      if (spdy && !protocol) throw new HttpError(403, `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${ours.join(' ')}]`);
      if (!protocol) throw new HttpError(400, `none of the WebSocket subprotocols [${offered.join(', ')}] is supported; the agent speaks ${ours.join(', ')}`);
    } catch (e) {
      if (e instanceof HttpError) return failUpgrade(socket, e.code, e.message);
      throw e;
    }
    if (spdy) {
      // SPDY frames are small and interactive (the kubelet's Go sockets have TCP_NODELAY)
      (socket as Partial<Socket>).setNoDelay?.(true);
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_UPGRADE}\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
      if (head.length > 0) socket.unshift(head);
      return run.spdy(socketBytes(socket), protocol);
    }
    chosenProtocol.set(req, protocol);
    wss.handleUpgrade(req, socket, head, (ws) => run.webSocket(ws));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://agent');
    if (url.pathname === '/healthz') {
      // the liveness check a service manager or probe uses (spec 002 §4.1, §8)
      if (o.healthy()) res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      else res.writeHead(500, { 'Content-Type': 'text/plain' }).end('container runtime is not ready');
      return;
    }
    const who = await authenticate(req, c, o.api, o.domain, o.clock.now());
    if (!who.ok) return fail(res, 401, `Unauthorized: ${who.message}`);
    const parts = url.pathname.split('/').slice(1);
    if (STREAM_PATHS.has(parts[0]!)) {
      const z = await authorize(who.user, { verb: VERBS[req.method ?? 'GET'] ?? 'get', subresource: 'proxy', nodeName: o.nodeName }, c, o.api, o.domain);
      if (!z.allowed) return fail(res, 403, `Forbidden (user=${who.user.username}, verb=${VERBS[req.method ?? 'GET'] ?? 'get'}, resource=nodes, subresource=proxy)${z.reason ? `: ${z.reason}` : ''}`);
      try {
        await serveStreamHttp(streams, parseStreamPath(url.pathname), url, req, res);
      } catch (e) {
        if (!(e instanceof HttpError)) throw e;
        if (res.headersSent) res.destroy();
        else fail(res, e.code, e.message);
      }
      return;
    }
    // kubelet's resource metrics and Summary API (docs/metrics.md): nodes/metrics and nodes/stats
    const usage = USAGE_PATHS[url.pathname];
    if (usage) return serveUsage(req, res, who.user, usage);
    if (parts[0] !== 'checkpoint') return fail(res, 404, `the server could not find the requested resource ${url.pathname}`);
    // spec 002 §7: 404 when the gate is off (the endpoint does not exist)
    if (!featureEnabled(c.featureGates, 'ContainerCheckpoint')) return fail(res, 404, 'the checkpoint endpoint is disabled (feature gate ContainerCheckpoint)');
    const z = await authorize(who.user, { verb: 'create', subresource: 'checkpoint', nodeName: o.nodeName }, c, o.api, o.domain);
    if (!z.allowed) return fail(res, 403, `Forbidden (user=${who.user.username}, verb=create, resource=nodes, subresource=checkpoint)${z.reason ? `: ${z.reason}` : ''}`);
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return fail(res, 405, `method ${req.method} is not allowed on ${url.pathname}; use POST`);
    }
    if (parts.length !== 4 || parts.slice(1).some((p) => p === '')) return fail(res, 404, `expected /checkpoint/{namespace}/{pod}/{container}, got ${url.pathname}`);
    const [ns, podName, container] = parts.slice(1).map(decodeURIComponent) as [string, string, string];
    for (const [what, v] of [['namespace', ns], ['pod', podName], ['container', container]] as const) {
      if (!NAME.test(v) || v.length > 253) return fail(res, 400, `invalid ${what} name "${v}"`);
    }
    const t = url.searchParams.get('timeout');
    if (t !== null && !/^\d+$/.test(t)) return fail(res, 400, `timeout must be a whole number of seconds, got "${t}"`);
    const timeout = t === null ? 0 : Number(t);

    const pod = o.pods().find((p) => (p.metadata.namespace ?? 'default') === ns && p.metadata.name === podName);
    if (!pod) return fail(res, 404, `pod ${ns}/${podName} not found on node ${o.nodeName}`);
    const spec = pod.spec as { containers?: { name: string }[] };
    if (!spec.containers?.some((x) => x.name === container)) return fail(res, 404, `container ${container} not found in pod ${ns}/${podName}`);
    const sandboxes = await o.runtime.listPodSandbox({ [LABEL_POD_UID]: pod.metadata.uid! });
    const candidates = [];
    for (const sb of sandboxes) candidates.push(...(await o.runtime.listContainers({ podSandboxId: sb.id })).filter((x) => x.labels[LABEL_CONTAINER] === container));
    const target = candidates.sort((a, b) => b.metadata.attempt - a.metadata.attempt)[0];
    if (!target) return fail(res, 404, `container ${container} of pod ${ns}/${podName} has not been created`);

    const location = join(o.rootDir, 'checkpoints', `checkpoint-${podFullName(ns, podName)}-${container}-${stamp(new Date(o.clock.now()))}.tar`);
    try {
      await o.runtime.checkpointContainer(target.id, location, timeout);
    } catch (e) {
      if (e instanceof RuntimeCallError && e.unimplemented) {
        return fail(res, 500, `checkpointing of ${ns}/${podName}/${container} failed: the container runtime does not implement CheckpointContainer (${e.details})`);
      }
      return fail(res, 500, `checkpointing of ${ns}/${podName}/${container} failed: ${(e as Error).message}`);
    }
    try {
      await stat(location);
    } catch {
      return fail(res, 500, `checkpointing of ${ns}/${podName}/${container} failed: the runtime reported success but wrote no archive at ${location}`);
    }
    // spec 002 §1: the archive holds all memory pages; readable by its owner only
    await chmod(location, 0o600);
    o.log(`checkpoint of ${ns}/${podName}/${container} written to ${location}`);
    send(res, 200, { items: [location] });
  }

  async function serveUsage(req: IncomingMessage, res: ServerResponse, user: Caller, subresource: 'metrics' | 'stats'): Promise<void> {
    const verb = VERBS[req.method ?? 'GET'] ?? 'get';
    const z = await authorize(user, { verb, subresource, nodeName: o.nodeName }, c, o.api, o.domain);
    if (!z.allowed) return fail(res, 403, `Forbidden (user=${user.username}, verb=${verb}, resource=nodes, subresource=${subresource})${z.reason ? `: ${z.reason}` : ''}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return fail(res, 405, `method ${req.method} is not allowed on ${req.url ?? ''}; use GET`);
    }
    if (subresource === 'metrics') {
      let summary: ResourceSummary | undefined;
      try {
        summary = await stats.collect();
      } catch (e) {
        // kubelet answers 200 with resource_scrape_error 1 and logs the cause
        o.log(`resource metrics: ${(e as Error).message}`);
      }
      const text = resourceMetricsText(summary);
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      res.end(req.method === 'HEAD' ? undefined : text);
      return;
    }
    try {
      send(res, 200, summaryJson(await stats.collect()));
    } catch (e) {
      fail(res, 500, `failed to get node stats summary: ${(e as Error).message}`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(c.port, c.address, () => resolve());
  });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : c.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
