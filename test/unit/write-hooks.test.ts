// sequenceHooks (src/registry/write-hooks.ts): sets of write hooks run in
// order as one; a set that declares `appliesTo` is called only for those
// resources, worked out once per resource definition.
import { describe, expect, it } from 'vitest';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import type { AdmissionCall, WriteHooks } from '../../src/registry/write-options.js';
import { coreResources, sequenceHooks } from '../../src/registry/write-hooks.js';

const def = (group: string, resource: string) => ({ group, resource, version: 'v1', kind: 'X' }) as ResourceDefinition;
const PODS = def('', 'pods');
const CONFIGMAPS = def('', 'configmaps');
const call = (d: ResourceDefinition, object: ApiObject): AdmissionCall => ({ operation: 'CREATE', def: d, namespace: 'ns', name: 'n', object, oldObject: undefined, opts: { dryRun: false } });

/** a set that records its calls and labels the object it mutates */
function recorder(name: string, seen: string[], appliesTo?: (d: ResourceDefinition) => boolean): WriteHooks {
  return {
    ...(appliesTo ? { appliesTo } : {}),
    beforeWrite: (d) => void seen.push(`${name}.beforeWrite:${d.resource}`),
    beforeDelete: (d) => void seen.push(`${name}.beforeDelete:${d.resource}`),
    async mutate(c) {
      seen.push(`${name}.mutate:${c.def.resource}`);
      return { ...c.object!, metadata: { ...c.object!.metadata, labels: { ...c.object!.metadata?.labels, [name]: 'x' } } };
    },
    async validateAdmission(c) {
      seen.push(`${name}.validate:${c.def.resource}:${Object.keys(c.object?.metadata?.labels ?? {}).join(',')}`);
    },
  };
}

describe('sequenceHooks', () => {
  it('calls a set that declares appliesTo only for its resources, the others for every resource, in order', async () => {
    const seen: string[] = [];
    const hooks = sequenceHooks([recorder('all', seen), recorder('podsOnly', seen, coreResources('pods')), recorder('last', seen)]);
    const obj = { metadata: { name: 'n' } } as ApiObject;

    const cm = await hooks.mutate!(call(CONFIGMAPS, obj));
    hooks.beforeWrite(CONFIGMAPS, cm!, undefined, { dryRun: false });
    await hooks.validateAdmission!(call(CONFIGMAPS, cm!));
    hooks.beforeDelete(CONFIGMAPS, cm!);
    expect(seen).toEqual([
      'all.mutate:configmaps', 'last.mutate:configmaps',
      'all.beforeWrite:configmaps', 'last.beforeWrite:configmaps',
      'all.validate:configmaps:all,last', 'last.validate:configmaps:all,last',
      'all.beforeDelete:configmaps', 'last.beforeDelete:configmaps',
    ]);

    seen.length = 0;
    const pod = await hooks.mutate!(call(PODS, obj));
    // each set got the object the one before it returned
    expect(pod?.metadata?.labels).toEqual({ all: 'x', podsOnly: 'x', last: 'x' });
    hooks.beforeWrite(PODS, pod!, undefined, { dryRun: false });
    expect(seen).toEqual(['all.mutate:pods', 'podsOnly.mutate:pods', 'last.mutate:pods', 'all.beforeWrite:pods', 'podsOnly.beforeWrite:pods', 'last.beforeWrite:pods']);
  });

  it('asks appliesTo once per definition, and again for a new definition of the same resource (a changed CRD)', async () => {
    const asked: string[] = [];
    const hooks = sequenceHooks([{ appliesTo: (d) => (asked.push(d.resource), d.group === 'example.com'), validateAdmission: async () => {} }]);
    const crd = def('example.com', 'widgets');
    for (let i = 0; i < 3; i++) await hooks.validateAdmission!(call(crd, {} as ApiObject));
    await hooks.validateAdmission!(call(CONFIGMAPS, {} as ApiObject));
    await hooks.validateAdmission!(call(def('example.com', 'widgets'), {} as ApiObject));
    expect(asked).toEqual(['widgets', 'configmaps', 'widgets']);
  });

  it('leaves out mutate and validateAdmission when no set has them', () => {
    const hooks = sequenceHooks([{ beforeWrite: () => {} }, { appliesTo: coreResources('pods'), beforeDelete: () => {} }]);
    expect(hooks.mutate).toBeUndefined();
    expect(hooks.validateAdmission).toBeUndefined();
  });

  it('coreResources matches only the core group', () => {
    const pick = coreResources('pods', 'persistentvolumeclaims');
    expect([PODS, def('', 'persistentvolumeclaims'), def('apps', 'pods'), CONFIGMAPS].map(pick)).toEqual([true, true, false, false]);
  });

  it('says whether a mutation in place may happen for a resource: sets that return a changed copy do not count', () => {
    const seen: string[] = [];
    const webhooks: WriteHooks = { ...recorder('chain', seen), mutatesCopy: true };
    const hooks = sequenceHooks([{ beforeWrite: () => {} }, recorder('podsOnly', seen, coreResources('pods')), webhooks]);
    expect(hooks.mutatesInPlace(PODS)).toBe(true);
    expect(hooks.mutatesInPlace(CONFIGMAPS)).toBe(false);
  });

  it('records fields with the sets that apply, and puts what each recorded on the written object', () => {
    const fields = (name: string, appliesTo?: (d: ResourceDefinition) => boolean): WriteHooks => ({
      ...(appliesTo ? { appliesTo } : {}),
      recordFields: (_d, obj) => {
        const sent = obj.metadata?.name; // read when recorded, not when put
        return (written) => void ((written.metadata!.labels ??= {})[name] = `${sent}`);
      },
    });
    const hooks = sequenceHooks([fields('all'), fields('podsOnly', coreResources('pods')), { recordFields: () => undefined }]);
    const obj = { metadata: { name: 'before' } } as ApiObject;
    const put = hooks.recordFields(PODS, obj, undefined, { dryRun: false });
    obj.metadata!.name = 'after';
    put!(obj);
    expect(obj.metadata?.labels).toEqual({ all: 'before', podsOnly: 'before' });
    const cm = { metadata: { name: 'cm' } } as ApiObject;
    hooks.recordFields(CONFIGMAPS, cm, undefined, { dryRun: false })!(cm);
    expect(cm.metadata?.labels).toEqual({ all: 'cm' });
    expect(sequenceHooks([{ beforeWrite: () => {} }]).recordFields(PODS, obj, undefined, { dryRun: false })).toBeUndefined();
  });
});
