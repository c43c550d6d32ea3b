// pods/eviction of a pod whose budgets do not count (Pending here) races another writer: the
// scheduler binding it between the eviction's read and its delete. Kube retries that conflict
// with the pod read again (EvictionREST's retry.OnError(EvictionsRetry, IsConflict)) unless the
// caller pinned a resourceVersion. The pods store is a small in-memory one with kube's
// resourceVersion preconditions, so the interleaving happens exactly where the race is.
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import type { CapabilityContext, CapabilityDeleteOptions, CapabilityStore } from '../../src/registry/capabilities.js';
import { evictionCapability } from '../../src/registry/kinds/pod-eviction.js';
import type { ApiObject } from '../../src/registry/types.js';

function podStore(onFirstGet: (bump: () => void) => void): { store: CapabilityStore; pod(): ApiObject | undefined } {
  let rv = 10;
  let pod: ApiObject | undefined = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u1', resourceVersion: String(rv) },
    spec: { containers: [{ name: 'c', image: 'x' }] }, status: { phase: 'Pending' },
  };
  const bump = () => {
    pod = { ...pod!, metadata: { ...pod!.metadata, resourceVersion: String(++rv) } };
  };
  let gets = 0;
  const conflict = (want: string) => new StatusError(409, 'Conflict', `the ResourceVersion in the precondition (${want}) does not match the ResourceVersion in record (${rv})`);
  const store: CapabilityStore = {
    async get() {
      if (!pod) throw new StatusError(404, 'NotFound', 'pods "p" not found');
      const copy = structuredClone(pod);
      if (++gets === 1) onFirstGet(bump);
      return copy;
    },
    async guaranteedUpdate(_ns, _name, _opts, update) {
      const next = update(pod && structuredClone(pod));
      const want = next.metadata?.resourceVersion;
      if (want !== undefined && want !== String(rv)) throw conflict(want);
      pod = { ...next, metadata: { ...next.metadata, resourceVersion: String(++rv) } };
      return { object: structuredClone(pod) };
    },
    async delete(_ns, _name, opts: CapabilityDeleteOptions) {
      const want = opts.preconditions?.resourceVersion;
      if (want && want !== String(rv)) throw conflict(want);
      const gone = pod!;
      pod = undefined;
      return { object: gone, deleted: true };
    },
    async list() {
      return pod ? [structuredClone(pod)] : [];
    },
  };
  return { store, pod: () => pod };
}

function context(store: CapabilityStore): CapabilityContext {
  return {
    user: { username: 'admin', groups: ['system:masters'] },
    namespace: 'ns',
    name: 'p',
    dryRun: false,
    store: () => store,
    storeOf: () => undefined,
    now: () => Date.parse('2026-11-28T00:00:00Z'),
    admitCreate: async (o: ApiObject) => o,
    fieldValidation: () => 'Warn',
    fieldManager: () => 'test',
  } as unknown as CapabilityContext;
}

const eviction = (extra: Record<string, unknown> = {}): ApiObject => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p', namespace: 'ns' }, ...extra });

describe('pods/eviction of a Pending pod written to meanwhile', () => {
  it('is retried with the pod read again, and the pod is deleted (kube: a conflict is retried)', async () => {
    const s = podStore((bump) => bump());
    const r = await evictionCapability().create!(context(s.store), eviction());
    expect(r.status).toBe(201);
    expect(s.pod()).toBeUndefined();
  });

  it("is a 409 when the caller pinned the resourceVersion (kube does not retry the caller's precondition)", async () => {
    const s = podStore((bump) => bump());
    await expect(evictionCapability().create!(context(s.store), eviction({ deleteOptions: { preconditions: { resourceVersion: '10' } } }))).rejects.toMatchObject({ code: 409 });
    expect(s.pod()).toBeDefined();
  });
});
