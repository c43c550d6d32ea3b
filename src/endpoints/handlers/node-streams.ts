// Sub-resources served by a node agent (docs/nodeagent.md "Streams"):
// pods/log, pods/exec, pods/attach, pods/portforward and nodes/proxy. The
// request was authenticated and authorized by the router like any other
// (e.g. `get pods/log`, `get`/`create pods/exec` by HTTP method, as kube 1.32);
// here the pod and container are checked with kube's messages, the pod's
// node is found, and the request goes on to that node's agent through
// `ctx.nodeTransport`. Logs and proxied responses stream back as they come;
// exec, attach and port-forward become a WebSocket relayed message by message
// to a WebSocket the API server opens to the agent, or (SPDY/3.1 upgrades) a
// connection relayed byte for byte to the agent's upgraded connection.
// pods/proxy and services/proxy: a pod's address is not reachable from the API
// server in this project (simulated sandboxes have no network), so the HTTP
// request travels through a port-forward of the pod's agent.

import { StatusError, badRequest, notFound } from '../../core/errors.js';
import { type Clock, type TimerHandle, every } from '../../core/clock.js';
import type { ApiObject } from '../../registry/types.js';
import type { ApiRequest, ApiResponse, RawStream, StreamSink, WebSocketPeer } from '../request.js';
import type { HandlerContext } from './context.js';
import { listObjects } from '../../registry/list.js';
import { parseLabelSelector } from '../../machinery/selectors/labels.js';
import { relayWebSocket } from './node-relay.js';
import { NodeRefusal, NodeUnreachable, type NodeEndpoint, type NodeHttpResponse, type NodeTransport } from './node-transport.js';
import { boolParam, queryBool } from '../query-params.js';

export const NODE_STREAM_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

/** the paths (uWS patterns) whose requests may be WebSocket handshakes */
export const NODE_STREAM_WEBSOCKET_PATHS = [
  ...['log', 'exec', 'attach', 'portforward', 'proxy', 'proxy/*'].map((s) => `/api/v1/namespaces/:namespace/pods/:name/${s}`),
  '/api/v1/nodes/:name/proxy',
  '/api/v1/nodes/:name/proxy/*',
];

/** kube's PodLogOptions / PodExecOptions / PodAttachOptions / PodPortForwardOptions query keys the agent reads */
const LOG_KEYS = ['follow', 'previous', 'sinceSeconds', 'sinceTime', 'timestamps', 'tailLines', 'limitBytes'];
const EXEC_KEYS = ['command', 'stdin', 'stdout', 'stderr', 'tty'];

type PodSpec = { nodeName?: string; containers?: { name: string }[]; initContainers?: { name: string }[]; ephemeralContainers?: { name: string }[] };

export async function handleNodeStream(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const { resource, subresource, namespace } = req.info;
  const transport = ctx.nodeTransport;
  if (CONNECT_OPTIONS[subresource] && ctx.admitConnect) {
    // CONNECT admission sees the options object, as in kube (webhooks and policies may refuse an exec);
    // it throws to refuse. Warnings are dropped: a stream's answer has no place for them once upgraded.
    // (proxy names may carry a scheme and port, `web:8080`: the proxy path looks its target up itself)
    if (subresource !== 'proxy') await ctx.storeFor(req.def).get(namespace, req.info.name);
    await ctx.admitConnect({ def: req.def, subresource, namespace, name: req.info.name, options: connectOptions(req), user: req.user });
  }
  const unserved = (why: string) =>
    new StatusError(503, 'ServiceUnavailable', `${resource}/${subresource} of ${resource} "${req.info.name}" is not served: ${why}`, { name: req.info.name, kind: resource });
  if (subresource === 'proxy' && (resource === 'pods' || resource === 'services')) {
    if (!transport) throw unserved('the server has no way to node agents');
    return proxyToPod(ctx, transport, req);
  }
  const name = req.info.name;
  const obj = await ctx.storeFor(req.def).get(namespace, name);
  if (!transport) throw unserved('the server has no way to node agents');
  if (resource === 'nodes' && subresource === 'proxy') return proxyToNode(ctx, transport, req, obj);
  if (resource !== 'pods') throw unserved('only pods and nodes have streams');

  const spec = (obj.spec ?? {}) as PodSpec;
  // kube checks the container before the node (LogLocation, streamLocation); a pod without a node has
  // no log yet: kube's LogLocation gives no location and its empty stream is 204 No Content
  const container = subresource === 'portforward' ? '' : containerOf(spec, name, req.query.get('container'));
  if (subresource === 'log' && !spec.nodeName) return { status: 204, body: undefined };
  const ep = await endpointOf(ctx, spec.nodeName, name);
  const enc = encodeURIComponent;
  if (subresource === 'portforward') {
    // kubectl's SPDY tunnel names the ports inside the session, client libraries in the query: the
    // API's PodPortForwardOptions `ports` (client-node, python), which kube passes on to the kubelet
    // as one `port=P,Q` (streamParams). Without `ports`, orch passes the kubelet's own `port` on.
    const ports = req.query.getAll('ports');
    const q = ports.length > 0 ? new URLSearchParams({ port: ports.join(',') }) : pick(req.query, ['port']);
    return upgrade(transport, ep, `/portForward/${enc(namespace)}/${enc(name)}?${q}`, req);
  }
  const path = `/${enc(namespace)}/${enc(name)}/${enc(container)}`;
  if (subresource === 'log') {
    const logPath = `/containerLogs${path}?${pick(req.query, LOG_KEYS)}`;
    return isWebSocket(req) ? logsOverWebSocket(transport, ep, logPath, req) : logs(ctx, transport, ep, logPath, req);
  }
  // exec and attach
  const phase = (obj.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') throw badRequest(`cannot ${subresource} into a container in a completed pod; current phase is ${phase}`);
  const q = pick(req.query, EXEC_KEYS);
  if (subresource === 'exec' && !q.has('command')) throw badRequest('you must specify at least one command for the container');
  return upgrade(transport, ep, `/${subresource}${path}?${q}`, req);
}

/** the options kind a CONNECT on each sub-resource carries */
const CONNECT_OPTIONS: Record<string, string> = { exec: 'PodExecOptions', attach: 'PodAttachOptions', portforward: 'PodPortForwardOptions', proxy: 'ProxyOptions' };

function connectOptions(req: ApiRequest): ApiObject {
  const q = req.query;
  const sub = req.info.subresource;
  const kind = sub === 'proxy' ? `${req.def.kind}ProxyOptions` : CONNECT_OPTIONS[sub]!;
  const o: ApiObject = { kind, apiVersion: 'v1' };
  if (sub === 'exec' || sub === 'attach') {
    for (const f of ['stdin', 'stdout', 'stderr', 'tty']) if (q.has(f)) o[f] = boolParam(q, f);
    if (q.get('container')) o.container = q.get('container')!;
    if (sub === 'exec') o.command = q.getAll('command');
  } else if (sub === 'portforward') {
    o.ports = q.getAll('ports').map(Number).filter((n) => Number.isInteger(n));
  } else if (q.get('path')) {
    o.path = q.get('path')!;
  }
  return o;
}

/** the boolean options, passed on as `true`/`false` whatever spelling the client used (kube re-encodes them too) */
const BOOL_KEYS = new Set(['follow', 'previous', 'timestamps', 'stdin', 'stdout', 'stderr', 'tty']);

function pick(q: URLSearchParams, keys: string[]): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of q) if (keys.includes(k)) out.append(k, BOOL_KEYS.has(k) ? String(queryBool(v)) : v);
  return out;
}

/** kube's defaulting and messages: the only container, else the caller must name one of the pod's */
function containerOf(spec: PodSpec, pod: string, asked: string | null): string {
  const containers = spec.containers ?? [];
  const all = [...containers, ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].map((c) => c.name);
  if (!asked) {
    if (containers.length === 1) return containers[0]!.name;
    throw badRequest(`a container name must be specified for pod ${pod}, choose one of: [${all.join(' ')}]`);
  }
  if (!all.includes(asked)) throw badRequest(`container ${asked} is not valid for pod ${pod}`);
  return asked;
}

const isWebSocket = (req: ApiRequest) => (req.headers.get('upgrade') ?? '').toLowerCase() === 'websocket';

/** the node's agent: InternalIP, else ExternalIP, else Hostname; the port the agent reports */
async function endpointOf(ctx: HandlerContext, nodeName: string | undefined, pod: string): Promise<NodeEndpoint> {
  if (!nodeName) throw badRequest(`pod ${pod} does not have a host assigned`);
  const nodesDef = ctx.registry.lookup('', 'v1', 'nodes');
  if (!nodesDef) throw new StatusError(503, 'ServiceUnavailable', 'nodes are not served');
  let node: ApiObject;
  try {
    node = await ctx.storeFor(nodesDef).get('', nodeName);
  } catch (e) {
    if (e instanceof StatusError && e.code === 404) throw notFound('nodes', '', nodeName);
    throw e;
  }
  return nodeEndpoint(node);
}

export function nodeEndpoint(node: ApiObject): NodeEndpoint {
  const name = node.metadata?.name ?? '';
  const status = (node.status ?? {}) as { addresses?: { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
  const port = status.daemonEndpoints?.kubeletEndpoint?.Port ?? 0;
  const addrs = status.addresses ?? [];
  const host = ['InternalIP', 'ExternalIP', 'Hostname'].map((t) => addrs.find((a) => a.type === t)?.address).find(Boolean);
  if (!host || !port) throw new StatusError(503, 'ServiceUnavailable', `node ${name} does not report its node agent's address and port (status.addresses, status.daemonEndpoints)`);
  return { nodeName: name, host, port };
}

/** the agent's answer to a refused request, as the Status it sent (or one that says what it sent) */
function refusal(e: unknown, ep: NodeEndpoint): never {
  if (e instanceof NodeRefusal) {
    try {
      const s = JSON.parse(e.body) as { kind?: string; reason?: string; message?: string };
      if (s.kind === 'Status') throw new StatusError(e.status, s.reason ?? 'InternalError', s.message ?? '');
    } catch (inner) {
      if (inner instanceof StatusError) throw inner;
    }
    throw new StatusError(e.status, e.status === 404 ? 'NotFound' : 'InternalError', e.body.slice(0, 1024) || `the node agent of ${ep.nodeName} answered ${e.status}`);
  }
  if (e instanceof NodeUnreachable) throw new StatusError(503, 'ServiceUnavailable', `the node agent of node ${ep.nodeName} cannot be reached at ${ep.host}:${ep.port}: ${e.message}`);
  throw e;
}

async function logs(ctx: HandlerContext, transport: NodeTransport, ep: NodeEndpoint, path: string, req: ApiRequest): Promise<ApiResponse> {
  let res: NodeHttpResponse;
  try {
    res = await transport.request(ep, 'GET', path, { signal: req.signal });
  } catch (e) {
    refusal(e, ep);
  }
  if (res.status !== 200) refusal(new NodeRefusal(res.status, await readAll(res)), ep);
  return { status: 200, body: undefined, raw: pipeBody(ctx.clock, res, 'text/plain') };
}

/** kube's wsstream.NewDefaultReaderProtocols, the binary ones: '' (none offered) and `binary.k8s.io` */
const LOG_WEBSOCKET_PROTOCOLS = ['binary.k8s.io'];

/**
 * pods/log over a WebSocket (kube's StreamObject → wsstream.Reader): each piece of the log the agent
 * sends is one binary message, and the socket closes at the log's end. Refusals come before the
 * handshake, as plain HTTP. `base64.binary.k8s.io` (text messages) is not served.
 */
async function logsOverWebSocket(transport: NodeTransport, ep: NodeEndpoint, path: string, req: ApiRequest): Promise<ApiResponse> {
  const offered = (req.headers.get('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  const protocol = offered.length === 0 ? '' : offered.find((p) => LOG_WEBSOCKET_PROTOCOLS.includes(p));
  if (protocol === undefined) throw badRequest(`requested protocol(s) are not supported: [${offered.join(' ')}]; supports [${LOG_WEBSOCKET_PROTOCOLS.join(' ')}]`);
  let res: NodeHttpResponse;
  try {
    // not the request's signal: the handshake's request ends when the socket opens; close() ends the log
    res = await transport.request(ep, 'GET', path, {});
  } catch (e) {
    refusal(e, ep);
  }
  if (res.status !== 200) refusal(new NodeRefusal(res.status, await readAll(res)), ep);
  const HIGH = 1024 * 1024;
  let peer: WebSocketPeer | undefined;
  let ended = false;
  const early: Buffer[] = [];
  const toClient = (d: Buffer) => {
    peer!.send(d);
    if (peer!.bufferedAmount() > HIGH) res.body.pause();
  };
  res.body.on('data', (d: Buffer) => (peer ? toClient(d) : early.push(d)));
  const end = () => {
    ended = true;
    peer?.end(1000);
  };
  res.body.on('end', end);
  res.body.on('error', end);
  return {
    status: 101,
    body: undefined,
    upgrade: {
      protocol,
      open(p) {
        peer = p;
        for (const d of early.splice(0)) toClient(d);
        if (ended) p.end(1000);
      },
      message() {
        // the client sends nothing that matters on a log
      },
      drain() {
        if (peer && peer.bufferedAmount() < HIGH / 2) res.body.resume();
      },
      close() {
        if (!ended) res.body.destroy();
      },
    },
  };
}

async function proxyToNode(ctx: HandlerContext, transport: NodeTransport, req: ApiRequest, node: ApiObject): Promise<ApiResponse> {
  const ep = nodeEndpoint(node);
  // `/api/v1/nodes/{name}/proxy/{path}` → `/{path}` on the agent, query as given
  const marker = `/nodes/${req.info.name}/proxy`;
  const at = req.info.path.indexOf(marker);
  const rest = at >= 0 ? req.info.path.slice(at + marker.length) : '';
  const qs = req.query.toString();
  const path = `${rest.startsWith('/') ? rest : `/${rest}`}${qs ? `?${qs}` : ''}`;
  if ((req.headers.get('upgrade') ?? '').toLowerCase() === 'websocket') return upgrade(transport, ep, path, req);
  const method = verbMethod(req.info.verb);
  const headers: Record<string, string> = {};
  for (const k of ['accept', 'content-type']) {
    const v = req.headers.get(k);
    if (v) headers[k] = v;
  }
  let res: NodeHttpResponse;
  try {
    res = await transport.request(ep, method, path, { headers, body: req.body && req.body.length > 0 ? req.body : undefined, signal: req.signal });
  } catch (e) {
    refusal(e, ep);
  }
  const ct = res.headers['content-type'];
  // the agent's answer as it is, errors included (kube's proxy does not rewrite them)
  return { status: res.status, body: undefined, raw: pipeBody(ctx.clock, res, (Array.isArray(ct) ? ct[0] : ct) ?? 'application/octet-stream') };
}

/** `[scheme:]name[:port]`, kube's form of a proxied pod or service name */
function splitProxyName(raw: string): { name: string; port: string } {
  const parts = raw.split(':');
  if (parts.length === 3) return { name: parts[1]!, port: parts[2]! };
  if (parts.length === 2 && (parts[0] === 'http' || parts[0] === 'https')) return { name: parts[1]!, port: '' };
  return { name: parts[0]!, port: parts[1] ?? '' };
}

type Port = { name?: string; port?: number; containerPort?: number; targetPort?: number | string };
const containerPorts = (pod: ApiObject) => ((pod.spec as { containers?: { ports?: Port[] }[] } | undefined)?.containers ?? []).flatMap((c) => c.ports ?? []);

/**
 * pods/proxy and services/proxy: an HTTP request to a pod's port, through a port-forward of the pod's
 * agent (pod addresses are not reachable from the API server here). A service picks a Running pod
 * its selector matches (the first by name) and its port's targetPort (a number, or a container port's name).
 */
async function proxyToPod(ctx: HandlerContext, transport: NodeTransport, req: ApiRequest): Promise<ApiResponse> {
  const { namespace, resource } = req.info;
  const { name, port } = splitProxyName(req.info.name);
  const podsDef = ctx.registry.lookup('', 'v1', 'pods')!;
  let pod: ApiObject;
  let target: number | string;
  if (resource === 'services') {
    const svc = await ctx.storeFor(req.def).get(namespace, name);
    const spec = (svc.spec ?? {}) as { selector?: Record<string, string>; ports?: Port[] };
    const sp = port === '' ? spec.ports?.[0] : spec.ports?.find((p) => p.name === port || String(p.port) === port);
    if (!sp) throw new StatusError(503, 'ServiceUnavailable', `no endpoints available for service "${name}"${port ? ` port "${port}"` : ''}`);
    const selector = Object.entries(spec.selector ?? {});
    if (selector.length === 0) throw new StatusError(503, 'ServiceUnavailable', `no endpoints available for service "${name}" (it has no selector)`);
    const listed = await listObjects(ctx.storeFor(podsDef), { namespace, labelSelector: parseLabelSelector(selector.map(([k, v]) => `${k}=${v}`).join(',')), fieldSelector: [] }, ctx.tokens);
    const ready = listed.items
      .filter((p) => (p.status as { phase?: string } | undefined)?.phase === 'Running' && (p.spec as PodSpec | undefined)?.nodeName && !p.metadata?.deletionTimestamp)
      .sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
    if (!ready[0]) throw new StatusError(503, 'ServiceUnavailable', `no endpoints available for service "${name}"`);
    pod = ready[0];
    target = sp.targetPort ?? sp.port ?? 80;
  } else {
    pod = await ctx.storeFor(podsDef).get(namespace, name);
    target = port === '' ? 80 : port;
  }
  let num = typeof target === 'number' ? target : /^\d+$/.test(target) ? Number(target) : containerPorts(pod).find((p) => p.name === target)?.containerPort;
  if (!num) throw badRequest(`port "${String(target)}" is not a port of pod ${pod.metadata?.name}`);
  num = Number(num);
  const ep = await endpointOf(ctx, (pod.spec as PodSpec | undefined)?.nodeName, pod.metadata!.name!);
  const marker = `/${req.info.name}/proxy`;
  const at = req.info.path.indexOf(marker);
  const rest = at >= 0 ? req.info.path.slice(at + marker.length) : '';
  const qs = req.query.toString();
  const headers: Record<string, string> = {};
  for (const k of ['accept', 'content-type']) {
    const v = req.headers.get(k);
    if (v) headers[k] = v;
  }
  let res: NodeHttpResponse;
  try {
    res = await transport.podRequest(ep, { namespace, name: pod.metadata!.name!, port: num }, verbMethod(req.info.verb), `${rest.startsWith('/') ? rest : `/${rest}`}${qs ? `?${qs}` : ''}`, {
      headers,
      body: req.body && req.body.length > 0 ? req.body : undefined,
      signal: req.signal,
    });
  } catch (e) {
    refusal(e, ep);
  }
  const ct = res.headers['content-type'];
  return { status: res.status, body: undefined, raw: pipeBody(ctx.clock, res, (Array.isArray(ct) ? ct[0] : ct) ?? 'application/octet-stream') };
}

function verbMethod(verb: string): string {
  return ({ get: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' } as Record<string, string>)[verb] ?? 'GET';
}

async function upgrade(transport: NodeTransport, ep: NodeEndpoint, path: string, req: ApiRequest): Promise<ApiResponse> {
  if (isSpdy(req)) return spdyUpgrade(transport, ep, path, req);
  // kube's UpgradeAwareHandler: a stream sub-resource needs an upgrade
  if (!isWebSocket(req)) throw badRequest('Upgrade request required');
  const offered = (req.headers.get('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  // `/` is not a token character (kubectl's `SPDY/3.1+portforward.k8s.io`): the agent knows it with `-`
  const toAgent = (p: string) => p.replaceAll('/', '-');
  let ws;
  try {
    ws = await transport.websocket(ep, path, offered.map(toAgent));
  } catch (e) {
    refusal(e, ep);
  }
  const chosen = offered.find((p) => toAgent(p) === ws.protocol) ?? ws.protocol;
  return { status: 101, body: undefined, upgrade: relayWebSocket(ws, chosen) };
}

const isSpdy = (req: ApiRequest) => (req.headers.get('upgrade') ?? '').toLowerCase() === 'spdy/3.1';

/**
 * A SPDY/3.1 upgrade, as kube-apiserver's UpgradeAwareHandler proxies it: the agent is asked the
 * same upgrade (its protocol negotiation, its refusals as the client's answer), and once it switched,
 * the client's connection is relayed to it byte for byte (the gateway hands it over, byte-tunnels.ts).
 */
async function spdyUpgrade(transport: NodeTransport, ep: NodeEndpoint, path: string, req: ApiRequest): Promise<ApiResponse> {
  const headers: Record<string, string> = { connection: 'Upgrade', upgrade: 'SPDY/3.1' };
  const protocols = req.headers.get('x-stream-protocol-version');
  if (protocols) headers['x-stream-protocol-version'] = protocols;
  let agent;
  try {
    agent = await transport.upgrade(ep, req.info.verb === 'get' ? 'GET' : 'POST', path, headers);
  } catch (e) {
    refusal(e, ep);
  }
  const { socket, head } = agent;
  const chosen = agent.headers['x-stream-protocol-version'];
  socket.on('error', () => socket.destroy());
  return {
    status: 101,
    body: undefined,
    tunnel: {
      open(client) {
        client.on('error', () => client.destroy());
        client.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n${chosen ? `X-Stream-Protocol-Version: ${String(chosen)}\r\n` : ''}\r\n`);
        if (head.length > 0) client.write(head);
        // pipe(): back-pressure both ways, and either side's end ends the other
        socket.pipe(client);
        client.pipe(socket);
        socket.on('close', () => {
          if (!client.writableEnded) client.end();
        });
        client.on('close', () => socket.destroy());
      },
      close: () => socket.destroy(),
    },
  };
}

function readAll(res: NodeHttpResponse): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    res.body.on('data', (c: Buffer) => chunks.push(c));
    res.body.on('end', () => resolve(Buffer.concat(chunks).toString()));
    res.body.on('error', () => resolve(Buffer.concat(chunks).toString()));
  });
}

/**
 * the agent's body to the client as it comes, pausing the agent while the client's queue is long;
 * the sink has no drain event, so a paused body looks again every 20 ms on the server's clock
 */
function pipeBody(clock: Clock, res: NodeHttpResponse, contentType: string): RawStream {
  const HIGH = 1024 * 1024;
  let timer: TimerHandle | undefined;
  return {
    contentType,
    start(sink: StreamSink) {
      res.body.on('data', (d: Buffer) => {
        sink.write(d);
        if (sink.backlog() > HIGH && !timer) {
          res.body.pause();
          timer = every(clock, 20, () => {
            if (sink.backlog() < HIGH / 2) {
              timer?.cancel();
              timer = undefined;
              res.body.resume();
            }
          });
        }
      });
      res.body.on('end', () => sink.end());
      res.body.on('error', () => sink.end());
    },
    stop() {
      timer?.cancel();
      res.body.destroy();
    },
  };
}
