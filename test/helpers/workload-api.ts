// The calls the workload-controller tests make against a started server, and
// the node agent's part they play themselves: bound pods become Running and
// Ready, graceful deletions finish.

import { expect } from 'vitest';
import type { TestServer } from './server.js';

export interface WObj {
  metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string; ownerReferences?: { apiVersion?: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[]; resourceVersion?: string; generation?: number; creationTimestamp?: string };
  spec: Record<string, unknown> & { nodeName?: string; replicas?: number; template?: { spec: { containers: { image: string }[] } } };
  status?: Record<string, unknown> & { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

export function workloadApi(server: () => TestServer) {
  async function list(path: string, selector?: string): Promise<WObj[]> {
    const r = await server().request('GET', selector ? `${path}?labelSelector=${encodeURIComponent(selector)}` : path);
    expect(r.status, r.text).toBe(200);
    return r.json<{ items: WObj[] }>().items;
  }

  async function get(path: string): Promise<WObj | undefined> {
    const r = await server().request('GET', path);
    return r.status === 200 ? r.json<WObj>() : undefined;
  }

  async function send(method: string, path: string, body: unknown, contentType = 'application/merge-patch+json'): Promise<WObj> {
    const r = await server().request(method, path, { body: body as object, headers: method === 'PATCH' ? { 'content-type': contentType } : {} });
    expect(r.status, r.text).toBeLessThan(300);
    return r.json<WObj>();
  }

  async function readyNode(name: string, labels: Record<string, string> = {}, cpu = '4', spec: Record<string, unknown> = {}): Promise<void> {
    const n = await send('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } }, spec });
    await send('PUT', `/api/v1/nodes/${name}/status`, {
      ...n,
      status: {
        capacity: { cpu, memory: '8Gi', pods: '110' },
        allocatable: { cpu, memory: '8Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }],
      },
    });
  }

  /** the node agent's part for the pods of `namespace` (all when `only` is not given, else those it accepts) */
  async function kubeletStep(namespace = 'default', only: (p: WObj) => boolean = () => true): Promise<void> {
    const pods = `/api/v1/namespaces/${namespace}/pods`;
    for (const p of await list(pods)) {
      if (!p.spec.nodeName || !only(p)) continue;
      if (p.metadata.deletionTimestamp) {
        const r = await server().request('DELETE', `${pods}/${p.metadata.name}`, { body: { gracePeriodSeconds: 0 } });
        expect([200, 404], r.text).toContain(r.status);
        continue;
      }
      if (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
      if (p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') continue;
      const now = new Date(Date.now() - 1000).toISOString();
      const conds = [...(p.status?.conditions ?? []).filter((c) => c.type !== 'Ready'), { type: 'Ready', status: 'True', lastTransitionTime: now }];
      await server().request('PUT', `${pods}/${p.metadata.name}/status`, { body: { ...p, status: { ...p.status, phase: 'Running', conditions: conds } } });
    }
  }

  /** the node agent's part run beside kubectl until the returned stop is awaited */
  function kubeletLoop(namespace = 'default'): () => Promise<void> {
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        await kubeletStep(namespace).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    return async () => {
      stop = true;
      await loop;
    };
  }

  return { list, get, send, readyNode, kubeletStep, kubeletLoop };
}

export const isReady = (p: WObj): boolean => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
