// The agent's small typed client of the control plane's public HTTPS API
// (spec 002 §1: the control plane is the source of truth). JSON over
// node:https with a keep-alive agent; errors carry the Kubernetes Status.

import { Agent, request } from 'node:https';
import type { ApiCredentials } from './kubeconfig.js';

/** the field manager the server derives from it is `nodeagent` */
const USER_AGENT = `nodeagent/v1.32.0 (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch})`;

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  ownerReferences?: Record<string, unknown>[];
  creationTimestamp?: string;
}
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

export interface WatchHandle {
  /** resolves when the stream ends (closed by the server, an error, or stop()) */
  done: Promise<void>;
  stop(): void;
}

/**
 * A kept-alive connection idle this long is closed by the agent itself, before
 * the API server's 90 s idle bound (src/gateway/tls-front.ts): a request sent on
 * a connection the server is closing at that moment would fail with a reset.
 */
export const IDLE_CONNECTION_MS = 60_000;

export class ApiClient {
  private agent: Agent;
  private readonly url: URL;

  constructor(
    private readonly creds: ApiCredentials,
    private readonly timeoutMs = 30_000,
    private readonly idleMs = IDLE_CONNECTION_MS,
  ) {
    this.url = new URL(creds.server);
    this.agent = this.newAgent(creds.certPem, creds.keyPem);
  }

  private newAgent(cert: string | undefined, key: string | undefined): Agent {
    // `timeout` on the agent closes kept-alive connections idle for idleMs (requests set their own)
    return new Agent({ keepAlive: true, timeout: this.idleMs, ca: this.creds.caPem, cert, key, servername: this.creds.tlsServerName });
  }

  /**
   * A rotated client certificate (tls-bootstrap.ts): later requests use it;
   * open connections, watches included, are closed, so they come back with
   * it (kubelet closes every connection on rotation too).
   */
  setClientCertificate(certPem: string, keyPem: string): void {
    const old = this.agent;
    this.agent = this.newAgent(certPem, keyPem);
    old.destroy();
  }

  close(): void {
    this.agent.destroy();
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { Accept: 'application/json', 'User-Agent': USER_AGENT, ...(this.creds.token ? { Authorization: `Bearer ${this.creds.token}` } : {}), ...extra };
  }

  async call<T = KubeObject>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: this.url.hostname,
          port: this.url.port || 443,
          method,
          path,
          agent: this.agent,
          timeout: this.timeoutMs,
          headers: this.headers(payload ? { 'Content-Type': contentType, 'Content-Length': String(payload.length) } : {}),
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          r.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
    let json: unknown;
    try {
      json = res.text ? JSON.parse(res.text) : {};
    } catch {
      json = { message: res.text };
    }
    if (res.status >= 400) {
      const s = json as { reason?: string; message?: string };
      throw new ApiError(res.status, s.reason ?? '', `${method} ${path}: ${res.status} ${s.message ?? res.text}`);
    }
    return json as T;
  }

  get<T = KubeObject>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }
  create<T = KubeObject>(path: string, obj: unknown): Promise<T> {
    return this.call<T>('POST', path, obj);
  }
  update<T = KubeObject>(path: string, obj: unknown): Promise<T> {
    return this.call<T>('PUT', path, obj);
  }
  mergePatch<T = KubeObject>(path: string, patch: unknown): Promise<T> {
    return this.call<T>('PATCH', path, patch, 'application/merge-patch+json');
  }
  strategicPatch<T = KubeObject>(path: string, patch: unknown): Promise<T> {
    return this.call<T>('PATCH', path, patch, 'application/strategic-merge-patch+json');
  }
  delete<T = KubeObject>(path: string, options?: Record<string, unknown>): Promise<T> {
    return this.call<T>('DELETE', path, options ? { kind: 'DeleteOptions', apiVersion: 'v1', ...options } : undefined);
  }

  /** a watch stream (newline-delimited JSON events) of `path` (which carries its query, with watch=1) */
  watch(path: string, onEvent: (e: WatchEvent) => void): WatchHandle {
    let stop: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      // timeout 0: a quiet watch is not idle (the agent's idle bound is for free connections)
      const req = request({ host: this.url.hostname, port: this.url.port || 443, method: 'GET', path, agent: this.agent, timeout: 0, headers: this.headers() }, (r) => {
        if ((r.statusCode ?? 0) >= 400) {
          r.resume();
          r.on('end', () => resolve());
          return;
        }
        let buf = '';
        r.setEncoding('utf8');
        r.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            try {
              onEvent(JSON.parse(line) as WatchEvent);
            } catch {
              /* a malformed line ends nothing: the next relist repairs state */
            }
          }
        });
        r.on('end', () => resolve());
        r.on('error', () => resolve());
        r.on('close', () => resolve());
      });
      req.on('error', () => resolve());
      req.end();
      stop = () => {
        req.destroy();
        resolve();
      };
    });
    return { done, stop: () => stop() };
  }
}
