// Shared fixtures of the watch tests: a real LocalStore in a temp dir, a
// sink that records what the gateway would send, and request builders.

import type { Clock } from '../../src/core/clock.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenericStore, encodeObject, storageKey } from '../../src/registry/generic-store.js';
import type { ApiRequest, Negotiated, StreamSink } from '../../src/endpoints/request.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { LocalStore } from '../../src/store/local-store.js';

export const configMaps: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  resource: 'configmaps',
  singular: 'configmap',
  scope: 'Namespaced',
  schema: { type: 'object' },
  strategy: {},
};

export const widgets: ResourceDefinition = {
  group: 'example.orch.io',
  version: 'v1',
  kind: 'Widget',
  resource: 'widgets',
  singular: 'widget',
  scope: 'Cluster',
  schema: { type: 'object' },
  strategy: {
    columns: [{ name: 'Size', type: 'integer', cell: (o) => (o.spec as { size?: number } | undefined)?.size ?? null }],
    selectableFields: { 'spec.color': (o) => (o.spec as { color?: string } | undefined)?.color },
  },
};

const dirs: string[] = [];

/** `clock`: the store's command times (share it with the WatchService under test) */
export async function openStore(clock?: Clock): Promise<LocalStore> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-watch-'));
  dirs.push(dir);
  return LocalStore.open(dir, { compactIntervalMs: 0, ...(clock ? { clock } : {}) });
}

export async function cleanupDirs(): Promise<void> {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
}

export function genericStore(def: ResourceDefinition, store: LocalStore): GenericStore {
  return new GenericStore(def, store, { admit: () => ({ errors: [], unknownFields: [] }), validateMeta: () => [] });
}

/** writes an object straight to the store (the generic store's key layout and encoding) */
export async function put(
  store: LocalStore,
  def: ResourceDefinition,
  ns: string,
  name: string,
  fields: { labels?: Record<string, string>; data?: Record<string, string>; spec?: Record<string, string | number> } = {},
): Promise<number> {
  const obj: ApiObject = {
    apiVersion: def.group ? `${def.group}/${def.version}` : def.version,
    kind: def.kind,
    metadata: { name, ...(def.scope === 'Namespaced' ? { namespace: ns } : {}), creationTimestamp: '2024-01-01T00:00:00Z' },
  };
  if (fields.labels) obj.metadata!.labels = fields.labels;
  if (fields.data) obj.data = fields.data;
  if (fields.spec) obj.spec = fields.spec;
  const key = storageKey(def, ns, name);
  const r = await store.txn({ compare: [], success: [{ type: 'put', key, value: encodeObject(obj) }], failure: [] });
  return r.revision;
}

export async function del(store: LocalStore, def: ResourceDefinition, ns: string, name: string): Promise<number> {
  const r = await store.txn({ compare: [], success: [{ type: 'delete', key: storageKey(def, ns, name) }], failure: [] });
  return r.revision;
}

export function request(
  def: ResourceDefinition,
  query: Record<string, string>,
  opts: { namespace?: string; accept?: Partial<Negotiated> } = {},
): ApiRequest {
  return {
    info: {
      isResourceRequest: true,
      path: '/',
      verb: 'watch',
      apiPrefix: def.group ? 'apis' : 'api',
      group: def.group,
      version: def.version,
      namespace: opts.namespace ?? '',
      resource: def.resource,
      subresource: '',
      name: '',
    },
    def,
    query: new URLSearchParams({ watch: '1', ...query }),
    headers: new Map(),
    contentType: '',
    user: { username: 'test', groups: [] },
    accept: { format: 'json', pretty: false, ...opts.accept },
    signal: new AbortController().signal,
  };
}

export interface WatchEventJson {
  type: string;
  object: {
    kind?: string;
    apiVersion?: string;
    metadata?: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
    code?: number;
    reason?: string;
    message?: string;
    [k: string]: unknown;
  };
}

/** records chunks like a socket would receive them; `stall()` makes every later byte count as backlog */
export class RecordingSink implements StreamSink {
  readonly chunks: Buffer[] = [];
  ended = false;
  private stalled = false;
  private queued = 0;

  write(chunk: Uint8Array | string): boolean {
    if (this.ended) throw new Error('write after end');
    // keep the very chunk object: the fan-out test checks watchers share one encoding
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.chunks.push(b);
    if (this.stalled) this.queued += b.length;
    return !this.stalled;
  }

  backlog(): number {
    return this.queued;
  }

  end(): void {
    if (this.ended) throw new Error('ended twice');
    this.ended = true;
  }

  stall(): void {
    this.stalled = true;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  events(): WatchEventJson[] {
    return this.text()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as WatchEventJson);
  }

  /** `TYPE name` for every non-bookmark event */
  summary(): string[] {
    return this.events()
      .filter((e) => e.type !== 'BOOKMARK')
      .map((e) => `${e.type} ${e.object.metadata?.name ?? e.object.reason ?? ''}`);
  }
}

/** polls until `cond` holds (events travel through setImmediate/timers); fails the test after `ms` */
export async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 2));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
