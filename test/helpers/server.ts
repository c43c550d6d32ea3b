// Starts a real orch server on an ephemeral loopback port in a temp data dir,
// and offers a raw HTTPS client authenticated with the admin certificate.

import { mkdtemp, rm } from 'node:fs/promises';
import { type Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, type ServerOptions, startServer } from '../../src/server/server.js';

export interface TestServer {
  server: RunningServer;
  dataDir: string;
  request(method: string, path: string, opts?: RequestOpts): Promise<RawResponse>;
  stop(keepData?: boolean): Promise<void>;
  /** `await using t = await startTestServer()`: the server stops (and its data goes) when the scope ends, even on failure */
  [Symbol.asyncDispose](): Promise<void>;
}

export interface RequestOpts {
  body?: string | Buffer | object;
  /** an array sends one field line per value */
  headers?: Record<string, string | string[]>;
  /** send no client certificate */
  anonymous?: boolean;
  cert?: { certPem: string; keyPem: string };
  /** a keep-alive agent for bulk tests (default: a new connection per request) */
  agent?: Agent;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  raw: Buffer;
  json<T = Record<string, unknown>>(): T;
}

export async function startTestServer(opts: Partial<ServerOptions> & { dataDir?: string } = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'orch-test-')));
  const server = await startServer({
    dataDir,
    bindAddress: '127.0.0.1',
    securePort: 0,
    apiDomain: 'orch.io',
    log: () => {},
    ...opts,
  });
  let stopped: Promise<void> | undefined;
  const stop = (keepData = false): Promise<void> =>
    (stopped ??= (async () => {
      await server.shutdown();
      if (!keepData) await rm(dataDir, { recursive: true, force: true });
    })());
  return {
    server,
    dataDir,
    request: (method, path, o = {}) => rawRequest(server, method, path, o),
    stop,
    [Symbol.asyncDispose]: () => stop(),
  };
}

export function rawRequest(server: RunningServer, method: string, path: string, o: RequestOpts = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body =
      o.body === undefined ? undefined : typeof o.body === 'string' || Buffer.isBuffer(o.body) ? o.body : JSON.stringify(o.body);
    const headers: Record<string, string | string[]> = { ...(o.headers ?? {}) };
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/json';
    }
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
    const cert = o.anonymous ? undefined : (o.cert ?? { certPem: server.adminCertPem, keyPem: server.adminKeyPem });
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        headers,
        ca: server.caPem,
        cert: cert?.certPem,
        key: cert?.keyPem,
        agent: o.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            raw,
            json<T>() {
              return JSON.parse(text) as T;
            },
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * `--controllers` without the namespace defaults (a default ServiceAccount and
 * the CA ConfigMap in every namespace): for tests of list and watch semantics
 * that count the objects of a namespace exactly, as kube-apiserver's own tests
 * run without kube-controller-manager.
 */
export const NO_NAMESPACE_DEFAULTS = { controllers: ['*', '-serviceaccount', '-root-ca-cert-publisher'] };

/**
 * Admission without the ServiceAccount plugin: with NO_NAMESPACE_DEFAULTS there
 * is no `default` account for it to find, so pods are created as sent (kube's
 * integration framework disables the plugin the same way).
 */
export const NO_SERVICE_ACCOUNT_ADMISSION = { disable: ['ServiceAccount'] };

/**
 * `--controllers` without the node lifecycle controller, and admission without
 * the TaintNodesByCondition plugin: for tests that make Ready nodes themselves
 * and schedule pods on them, or read a node's taints exactly. Without the
 * controller nothing would remove the not-ready taint the plugin puts on every
 * new Node (kube's scheduler integration tests disable the plugin the same way).
 */
export const NO_NODE_LIFECYCLE = {
  authn: { controllers: ['*', '-nodelifecycle', '-taint-eviction-controller'] },
  admissionPlugins: { disable: ['TaintNodesByCondition'] },
};

/**
 * `--controllers` without the workload controllers and the scheduler: for tests
 * of how the API serves the workload kinds (their status, the scale
 * sub-resource's resourceVersion, `kubectl get all` columns) that a controller
 * writing status would race, as kube-apiserver's own tests run without
 * kube-controller-manager and kube-scheduler.
 */
export const NO_WORKLOAD_CONTROLLERS = { controllers: ['*', '-deployment', '-replicaset', '-replicationcontroller', '-daemonset', '-statefulset', '-scheduler', '-job', '-cronjob', '-ttl-after-finished', '-persistentvolume-binder', '-pvc-protection', '-pv-protection', '-horizontalpodautoscaling'] };
