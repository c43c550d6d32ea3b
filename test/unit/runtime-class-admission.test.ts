// The RuntimeClass admission plugin (kube's plugin/pkg/admission/runtimeclass):
// the class must exist, its overhead becomes the pod's and only it may, its
// node selector and tolerations are merged (kube's MergeTolerations), on pod
// creates only; and its place among the plugins (on by default, after
// StorageObjectInUseProtection, off with --disable-admission-plugins).
import { describe, expect, it } from 'vitest';
import { mergeTolerations, type Toleration } from '../../src/machinery/toleration-merge.js';
import type { AdmissionCall } from '../../src/registry/write-options.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { runtimeClassAdmission } from '../../src/registry/runtime-class-admission.js';
import { admitPod, forbiddenBy } from '../helpers/admission-plugin.js';
import { admissionPluginWarnings, enabledAdmissionPlugins } from '../../src/server/admission-plugins.js';

const PODS = { group: '', resource: 'pods' } as ResourceDefinition;
type Obj = Record<string, unknown>;

const rc = (name: string, extra: Obj = {}) => ({ apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name }, handler: 'runsc', ...extra }) as unknown as ApiObject;
const KATA = rc('kata', { overhead: { podFixed: { cpu: '250m', memory: '64Mi' } } });
const SANDBOX = rc('sandbox', {
  scheduling: { nodeSelector: { sandbox: 'true', zone: 'a' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
});
const PLAIN = rc('plain');

function plugin(classes: ApiObject[] = [KATA, SANDBOX, PLAIN], late: ApiObject[] = []) {
  let caughtUp = 0;
  const hooks = runtimeClassAdmission({
    runtimeClasses: () => (caughtUp > 0 ? [...classes, ...late] : classes),
    catchUp: async () => void caughtUp++,
  });
  return { hooks, caughtUp: () => caughtUp };
}

const call = (spec: Obj, o: { operation?: AdmissionCall['operation']; meta?: Obj; subresource?: string; def?: ResourceDefinition } = {}): AdmissionCall => ({
  operation: o.operation ?? 'CREATE',
  def: o.def ?? PODS,
  namespace: 'default',
  name: 'p',
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', ...o.meta }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } } as unknown as ApiObject,
  oldObject: o.operation === 'UPDATE' ? ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} } as unknown as ApiObject) : undefined,
  opts: { dryRun: false, ...(o.subresource ? { subresource: o.subresource } : {}) },
});

const admit = admitPod;
const refusal = forbiddenBy;

describe('RuntimeClass admission: the class', () => {
  it("an unknown class is kube's 403, asked again after catching up with the leader", async () => {
    const { hooks, caughtUp } = plugin();
    const e = await refusal(admit(hooks, call({ runtimeClassName: 'nope' })));
    expect(e.message).toBe('pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found');
    expect(e.details).toEqual({ name: 'p', kind: 'pods' });
    expect(caughtUp()).toBe(1);
  });

  it('a class this member had not seen yet is found after the catch-up (kube falls back to a live GET)', async () => {
    const { hooks, caughtUp } = plugin([], [KATA]);
    const spec = await admit(hooks, call({ runtimeClassName: 'kata' }));
    expect(spec.overhead).toEqual({ cpu: '250m', memory: '64Mi' });
    expect(caughtUp()).toBe(1);
  });

  it('names a pod with generateName by it (its name is not generated yet); "" is a name, not found', async () => {
    const { hooks } = plugin();
    const e = await refusal(admit(hooks, call({ runtimeClassName: 'nope' }, { meta: { name: undefined, generateName: 'web-' } })));
    expect(e.message).toBe('pods "web-" is forbidden: pod rejected: RuntimeClass "nope" not found');
    expect((await refusal(admit(hooks, call({ runtimeClassName: '' })))).message).toBe('pods "p" is forbidden: pod rejected: RuntimeClass "" not found');
  });

  it('a pod naming no class, or a class with neither overhead nor scheduling, is left as it is', async () => {
    const { hooks } = plugin();
    expect(await admit(hooks, call({ nodeSelector: { a: 'b' } }))).toEqual({ containers: [{ name: 'c', image: 'i' }], nodeSelector: { a: 'b' } });
    expect(await admit(hooks, call({ runtimeClassName: 'plain' }))).toEqual({ containers: [{ name: 'c', image: 'i' }], runtimeClassName: 'plain' });
  });
});

describe('RuntimeClass admission: overhead', () => {
  it("sets the class's overhead, as a copy of it", async () => {
    const { hooks } = plugin();
    const spec = await admit(hooks, call({ runtimeClassName: 'kata' }));
    expect(spec.overhead).toEqual({ cpu: '250m', memory: '64Mi' });
    (spec.overhead as Obj).cpu = '9';
    expect((KATA as unknown as { overhead: { podFixed: Obj } }).overhead.podFixed.cpu).toBe('250m');
  });

  it('accepts an equal overhead the pod brings (quantities compared by value), refuses a differing one', async () => {
    const { hooks } = plugin();
    expect((await admit(hooks, call({ runtimeClassName: 'kata', overhead: { cpu: '0.25', memory: '67108864' } }))).overhead).toEqual({ cpu: '250m', memory: '64Mi' });
    const e = await refusal(admit(hooks, call({ runtimeClassName: 'kata', overhead: { cpu: '1', memory: '64Mi' } })));
    expect(e.message).toBe("pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    // a resource the class does not name differs too
    await refusal(admit(hooks, call({ runtimeClassName: 'kata', overhead: { cpu: '250m', memory: '64Mi', 'example.com/gpu': '1' } })));
  });

  it('refuses an overhead when the class defines none or the pod names no class; an empty one passes', async () => {
    const { hooks } = plugin();
    const why = 'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead';
    expect((await refusal(admit(hooks, call({ runtimeClassName: 'plain', overhead: { cpu: '1' } })))).message).toBe(why);
    expect((await refusal(admit(hooks, call({ overhead: { cpu: '1' } })))).message).toBe(why);
    expect((await admit(hooks, call({ overhead: {} }))).overhead).toEqual({});
  });

  it('checks again after the mutating webhooks: a webhook that changes the overhead is refused', async () => {
    const { hooks } = plugin();
    const c = call({ runtimeClassName: 'kata' });
    const out = (await hooks.mutate(c)) as unknown as { spec: Obj };
    out.spec.overhead = { cpu: '2' };
    const e = await refusal(hooks.validateAdmission({ ...c, object: out as unknown as ApiObject }));
    expect(e.message).toContain("Pod's Overhead doesn't match");
  });
});

describe('RuntimeClass admission: scheduling', () => {
  it("merges the class's node selector into the pod's", async () => {
    const { hooks } = plugin();
    expect((await admit(hooks, call({ runtimeClassName: 'sandbox' }))).nodeSelector).toEqual({ sandbox: 'true', zone: 'a' });
    expect((await admit(hooks, call({ runtimeClassName: 'sandbox', nodeSelector: { disk: 'ssd', zone: 'a' } }))).nodeSelector).toEqual({ disk: 'ssd', zone: 'a', sandbox: 'true' });
  });

  it("refuses a pod whose node selector gives a class's key another value", async () => {
    const { hooks } = plugin();
    const e = await refusal(admit(hooks, call({ runtimeClassName: 'sandbox', nodeSelector: { zone: 'b' } })));
    expect(e.message).toBe('pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[zone] = a; pod.spec.nodeSelector[zone] = b');
  });

  it("appends the class's tolerations the pod lacks, keeping the pod's first", async () => {
    const { hooks } = plugin();
    const own = { key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' };
    const same = { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' };
    expect((await admit(hooks, call({ runtimeClassName: 'sandbox', tolerations: [own] }))).tolerations).toEqual([own, same]);
    expect((await admit(hooks, call({ runtimeClassName: 'sandbox', tolerations: [same, own] }))).tolerations).toEqual([same, own]);
    // a narrower one of the pod's gives way to the class's broader one (kube's MergeTolerations)
    const narrower = { key: 'sandbox', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' };
    expect((await admit(hooks, call({ runtimeClassName: 'sandbox', tolerations: [narrower] }))).tolerations).toEqual([same]);
  });
});

describe('RuntimeClass admission: what it leaves alone', () => {
  it('updates: an unknown class, a differing overhead, a conflicting selector pass untouched', async () => {
    const { hooks } = plugin();
    const spec = { runtimeClassName: 'nope', overhead: { cpu: '1' } };
    expect(await admit(hooks, call(spec, { operation: 'UPDATE' }))).toEqual({ containers: [{ name: 'c', image: 'i' }], ...spec });
    const sel = { runtimeClassName: 'sandbox', nodeSelector: { zone: 'b' } };
    expect(await admit(hooks, call(sel, { operation: 'UPDATE' }))).toEqual({ containers: [{ name: 'c', image: 'i' }], ...sel });
  });

  it('sub-resources and other resources', async () => {
    const { hooks } = plugin();
    expect((await admit(hooks, call({ runtimeClassName: 'nope' }, { subresource: 'status' }))).runtimeClassName).toBe('nope');
    const other = { group: 'apps', resource: 'deployments' } as ResourceDefinition;
    expect((await admit(hooks, call({ runtimeClassName: 'kata' }, { def: other }))).overhead).toBeUndefined();
  });
});

describe("kube's MergeTolerations", () => {
  const t = (x: Toleration): Toleration => x;
  it('drops what another toleration covers; keeps the first of equal ones', () => {
    const a = t({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' });
    const allEffects = t({ key: 'k', operator: 'Exists' });
    const everything = t({ operator: 'Exists' });
    expect(mergeTolerations([a], [a])).toEqual([a]);
    expect(mergeTolerations([a], [allEffects])).toEqual([allEffects]);
    expect(mergeTolerations([allEffects], [a])).toEqual([allEffects]);
    expect(mergeTolerations([a, allEffects], [everything])).toEqual([everything]);
    // another key or effect is not covered
    const other = t({ key: 'j', operator: 'Exists', effect: 'NoSchedule' });
    const execute = t({ key: 'k', operator: 'Exists', effect: 'NoExecute' });
    expect(mergeTolerations([a], [other, execute])).toEqual([a, other, execute]);
    // an absent operator is Equal when it is the broader one's; the covered one's is compared as written (kube's isSuperset)
    expect(mergeTolerations([t({ key: 'k', value: 'v', effect: 'NoSchedule' })], [t({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' })])).toHaveLength(1);
    expect(mergeTolerations([t({ key: 'k', operator: 'Equal', value: 'w' })], [t({ key: 'k', value: 'v' })])).toHaveLength(2);
  });

  it('a NoExecute toleration with seconds covers only ones with as few seconds', () => {
    const short = t({ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 });
    const long = t({ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    const forever = t({ key: 'k', operator: 'Exists', effect: 'NoExecute' });
    expect(mergeTolerations([short], [long])).toEqual([long]);
    expect(mergeTolerations([long], [short])).toEqual([long]);
    expect(mergeTolerations([long], [forever])).toEqual([forever]);
  });
});

describe('RuntimeClass among the admission plugins', () => {
  it("on by default in kube's place, off when disabled, and no longer warned about", () => {
    const on = enabledAdmissionPlugins({});
    // kube's order: …, StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, …
    expect(on.indexOf('RuntimeClass')).toBe(on.indexOf('PersistentVolumeClaimResize') + 1);
    expect(on.indexOf('PersistentVolumeClaimResize')).toBe(on.indexOf('StorageObjectInUseProtection') + 1);
    expect(on.indexOf('RuntimeClass')).toBeLessThan(on.indexOf('CertificateSubjectRestriction'));
    expect(enabledAdmissionPlugins({ disable: ['RuntimeClass'] })).not.toContain('RuntimeClass');
    expect(admissionPluginWarnings({ enable: ['RuntimeClass'] })).toEqual([]);
  });
});
