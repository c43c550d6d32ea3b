// What the e2e-apps integration tests share: a `k8s.io` control plane with
// its controllers and one real node agent on the simulated runtime (pods
// become Running and Ready as on a kind cluster), the calls kube's e2e
// client makes, and `watchtools.Until` (a watch from a list's
// resourceVersion, read until a condition holds).

import { afterAll, beforeAll, expect } from 'vitest';
import { eventually } from './eventually.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from './nodeagent.js';
import type { ServerOptions } from '../../src/server/server.js';
import { type TestServer, startTestServer } from './server.js';
import { openWatch } from './watch-stream.js';

export type Obj = Record<string, any>;
/** a watch event as the e2e tests read it (the object decoded as its kind) */
export interface Event {
  type: string;
  object: Obj;
}

export const MERGE = 'application/merge-patch+json';
export const STRATEGIC = 'application/strategic-merge-patch+json';

export interface E2eEnv {
  ts(): TestServer;
  agent(): AgentProcess;
  /** the answer's JSON after checking its status (default: 201 for POST, else 200) */
  call(method: string, path: string, body?: unknown, contentType?: string, want?: number): Promise<Obj>;
  get(path: string): Promise<Obj>;
  list(path: string, selector?: string): Promise<Obj>;
  /** watchtools.Until: a watch of `path` from `rv` (with `selector`), read until `pred` holds for an event */
  until(path: string, rv: string, selector: string, pred: (e: Event) => boolean, timeoutMs?: number): Promise<Event>;
  /** polls (the agent acts on its own schedule), naming the agent's output on a timeout */
  eventually<T>(f: () => Promise<T | undefined | false>, what: string, ms?: number): Promise<T>;
  /** the running (phase Running, Ready) pods of `namespace` that `selector` selects */
  runningPods(namespace: string, selector: string, count: number): Promise<Obj[]>;
}

/** registers beforeAll/afterAll: one server (kube's API domain) and one Ready agent for the file */
/** `agentConfig`: more fields of the node agent's configuration file; `serverOptions`: the server's (a controller clock) */
export function e2eEnv(nodeName = 'e2e-node', agentConfig: Record<string, unknown> = {}, serverOptions: Partial<ServerOptions> = {}): E2eEnv {
  let ts: TestServer | undefined;
  let agent: AgentProcess | undefined;
  beforeAll(async () => {
    ts = await startTestServer({ apiDomain: 'k8s.io', ...serverOptions });
    agent = await startAgentProcess(ts, { nodeName, config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1', ...agentConfig } });
    await waitNodeReady(ts, agent, nodeName);
  }, 90_000);
  afterAll(async () => {
    await stopAgentAndServer(agent, ts);
  });

  const call = async (method: string, path: string, body?: unknown, contentType = MERGE, want?: number): Promise<Obj> => {
    const r = await ts!.request(method, path, { ...(body === undefined ? {} : { body: body as object }), headers: method === 'PATCH' ? { 'content-type': contentType } : {} });
    expect(r.status, `${method} ${path}: ${r.text}`).toBe(want ?? (method === 'POST' ? 201 : 200));
    return r.json<Obj>();
  };
  const get = (path: string): Promise<Obj> => call('GET', path);
  const list = (path: string, selector?: string): Promise<Obj> => get(selector === undefined ? path : `${path}?labelSelector=${encodeURIComponent(selector)}`);
  const ev = <T>(f: () => Promise<T | undefined | false>, what: string, ms = 40_000): Promise<T> =>
    eventually(f, what, { timeoutMs: ms, intervalMs: 200, context: () => agent?.output().slice(-2000) ?? '' }) as Promise<T>;

  return {
    ts: () => ts!,
    agent: () => agent!,
    call,
    get,
    list,
    async until(path, rv, selector, pred, timeoutMs = 40_000) {
      const w = openWatch(ts!.server, `${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}&labelSelector=${encodeURIComponent(selector)}`);
      try {
        return await w.waitUntil((e) => pred(e as Event), timeoutMs);
      } finally {
        w.close();
      }
    },
    eventually: ev,
    runningPods: (namespace, selector, count) =>
      ev(async () => {
        const pods = ((await list(`/api/v1/namespaces/${namespace}/pods`, selector)).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp);
        const running = pods.filter((p) => p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True'));
        return running.length === count && pods.length === count ? running : undefined;
      }, `${count} running pods for ${selector}`),
  };
}

/** a namespace of its own for each test, as the e2e framework makes one per test */
export async function namespace(env: E2eEnv, name: string): Promise<string> {
  await env.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  // the e2e framework waits for the namespace's default ServiceAccount
  await env.eventually(async () => (await env.ts().request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200, `${name}'s default ServiceAccount`);
  return name;
}

/** a pod template as kube's e2e helpers write it (one container; terminationGracePeriodSeconds 0 where they set it) */
export function podTemplate(labels: Record<string, string>, container: string, image: string, extra: Obj = {}): Obj {
  return { metadata: { labels: { ...labels } }, spec: { containers: [{ name: container, image }], ...extra } };
}

export const WEBSERVER = 'registry.k8s.io/e2e-test-images/httpd:2.4.38-4';
export const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.53';
export const PAUSE = 'registry.k8s.io/pause:3.10';

/** the condition named `type` in an object's status */
export const condition = (o: Obj, type: string): Obj | undefined => ((o.status?.conditions ?? []) as Obj[]).find((c) => c.type === type);

/** an event of `o`'s name (the e2e tests' `found` check) */
export const named = (name: string, e: Event): boolean => e.object.metadata?.name === name;

/** the e2e framework's Update…WithRetries: get, change, update; again on a conflict */
export function updateWithRetries(env: E2eEnv, path: string, change: (o: Obj) => void): Promise<Obj> {
  return env.eventually(async () => {
    const cur = await env.get(path);
    change(cur);
    const r = await env.ts().request('PUT', path, { body: cur });
    if (r.status === 409) return undefined;
    expect(r.status, r.text).toBe(200);
    return r.json<Obj>();
  }, `the update of ${path}`);
}
