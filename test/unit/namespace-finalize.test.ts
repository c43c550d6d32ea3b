// PUT namespaces/{name}/finalize while another writer changes the namespace between the read
// and the write: kube's namespace strategy allows unconditional updates, so a body without a
// resourceVersion is applied to the newer object (the store retries); one with a stale version is
// a 409. The store is a small in-memory one with the store's rule: a resourceVersion left in the
// result of an update is a precondition, none means "retry on the newer object".
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import type { CapabilityContext, CapabilityStore } from '../../src/registry/capabilities.js';
import { namespaceDefinition } from '../../src/registry/kinds/namespace.js';
import type { ApiObject } from '../../src/registry/types.js';

function racedStore(): { store: CapabilityStore; ns(): ApiObject } {
  let rv = 5;
  let ns: ApiObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', resourceVersion: '5' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } };
  let raced = false;
  const store: CapabilityStore = {
    get: async () => structuredClone(ns),
    async guaranteedUpdate(_ns, _name, _opts, update) {
      for (;;) {
        const next = update(structuredClone(ns));
        // another writer lands between this attempt's read and its compare-and-swap, once
        if (!raced) {
          raced = true;
          ns = { ...ns, metadata: { ...ns.metadata, labels: { other: 'writer' }, resourceVersion: String(++rv) } };
          if (next.metadata?.resourceVersion === undefined) continue;
        }
        if (next.metadata?.resourceVersion !== undefined && next.metadata.resourceVersion !== String(rv)) {
          throw new StatusError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
        }
        ns = { ...next, metadata: { ...next.metadata, resourceVersion: String(++rv) } };
        return { object: structuredClone(ns) };
      }
    },
    delete: async () => ({ object: ns, deleted: false }),
    list: async () => [ns],
  };
  return { store, ns: () => ns };
}

const finalize = namespaceDefinition(new SchemaNames('orch.io')).capabilities!.finalize!;
const ctx = (store: CapabilityStore) => ({ namespace: '', name: 'n', dryRun: false, store: () => store }) as unknown as CapabilityContext;

describe('namespaces/finalize under a concurrent write', () => {
  it('without a resourceVersion: applied to the newer object, the other write kept', async () => {
    const s = racedStore();
    const r = await finalize.update!(ctx(s.store), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, spec: { finalizers: [] } });
    expect(r.status).toBe(200);
    expect([s.ns().spec, s.ns().metadata?.labels]).toEqual([{ finalizers: [] }, { other: 'writer' }]);
  });

  it('with the version read before the other write: 409', async () => {
    const s = racedStore();
    await expect(finalize.update!(ctx(s.store), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', resourceVersion: '5' }, spec: { finalizers: [] } })).rejects.toMatchObject({ code: 409 });
  });
});
