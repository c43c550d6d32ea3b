// The ServiceAccount admission plugin (spec 001 §5.5; kube's
// plugin/pkg/admission/serviceaccount): defaulting, rejection, automount
// opt-outs, one volume only, mirror pods, and the k8s.io names.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/core/random.js';
import type { AdmissionCall } from '../../src/registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { serviceAccountAdmission } from '../../src/registry/service-account-admission.js';
import { admitPod, forbiddenBy } from '../helpers/admission-plugin.js';

const PODS = { group: '', resource: 'pods' } as ResourceDefinition;
type Obj = Record<string, unknown>;

function plugin(accounts: Record<string, Obj> = { default: {} }, o: { apiDomain?: string; namespaces?: string[] } = {}) {
  const slept: number[] = [];
  const hooks = serviceAccountAdmission({
    apiDomain: o.apiDomain ?? 'orch.io',
    random: seededRandom(7),
    sleep: async (ms) => void slept.push(ms),
    lookup: (resource, _ns, name) => {
      if (resource === 'namespaces') return (o.namespaces ?? ['default']).includes(name) ? ({ metadata: { name } } as ApiObject) : undefined;
      const sa = accounts[name];
      return sa ? ({ metadata: { name, namespace: 'default' }, ...sa } as ApiObject) : undefined;
    },
  });
  return { hooks, slept };
}

const call = (spec: Obj, meta: Obj = {}, operation: AdmissionCall['operation'] = 'CREATE'): AdmissionCall => ({
  operation,
  def: PODS,
  namespace: 'default',
  name: 'p',
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', ...meta }, spec } as unknown as ApiObject,
  oldObject: undefined,
  opts: { dryRun: false },
});

const admit = admitPod;
const refusal = async (p: Promise<unknown>): Promise<string> => (await forbiddenBy(p)).message;

const PATH = '/var/run/secrets/orch.io/serviceaccount';

describe('ServiceAccount admission', () => {
  it('defaults the account to default, mirrors it, and mounts the token volume in every container', async () => {
    const { hooks } = plugin();
    const spec = await admit(hooks, call({ initContainers: [{ name: 'i', image: 'x' }], containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/data' }] }], volumes: [{ name: 'data', emptyDir: {} }] }));
    expect(spec.serviceAccountName).toBe('default');
    expect(spec.serviceAccount).toBe('default');
    const volumes = spec.volumes as Obj[];
    expect(volumes).toHaveLength(2);
    const vol = volumes[1]!;
    expect(vol.name).toMatch(/^orch-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(vol.projected).toEqual({
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'orch-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    });
    const mount = { name: vol.name, readOnly: true, mountPath: PATH };
    expect((spec.initContainers as Obj[])[0]!.volumeMounts).toEqual([mount]);
    expect((spec.containers as Obj[])[0]!.volumeMounts).toEqual([mount]);
    expect((spec.containers as Obj[])[1]!.volumeMounts).toEqual([{ name: 'data', mountPath: '/data' }, mount]);
  });

  it('uses kube\'s names with --api-domain k8s.io', async () => {
    const { hooks } = plugin({ default: {} }, { apiDomain: 'k8s.io' });
    const spec = await admit(hooks, call({ containers: [{ name: 'a', image: 'x' }] }));
    const vol = (spec.volumes as Obj[])[0]!;
    expect(vol.name).toMatch(/^kube-api-access-[a-z0-9]{5}$/);
    expect(JSON.stringify(vol)).toContain('"name":"kube-root-ca.crt"');
    expect((spec.containers as Obj[])[0]!.volumeMounts).toEqual([{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  });

  it('refuses an account that does not exist with kube\'s message, waiting only for default', async () => {
    const { hooks, slept } = plugin({});
    expect(await refusal(admit(hooks, call({ serviceAccountName: 'robot', containers: [] })))).toBe(
      'pods "p" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found',
    );
    expect(slept).toEqual([]);
    expect(await refusal(admit(hooks, call({ containers: [] })))).toBe('pods "p" is forbidden: error looking up service account default/default: serviceaccount "default" not found');
    // kube's 10 attempts for the account its controller creates
    expect(slept).toHaveLength(9);
  });

  it('asks the store to catch up once after a miss (a follower behind the leader), as kube falls back to a live GET', async () => {
    let caughtUp = false;
    const hooks = serviceAccountAdmission({
      apiDomain: 'orch.io',
      random: seededRandom(1),
      sleep: async () => undefined,
      catchUp: async () => void (caughtUp = true),
      lookup: (resource, _ns, name) => (resource === 'namespaces' || caughtUp ? ({ metadata: { name } } as ApiObject) : undefined),
    });
    const spec = await admit(hooks, call({ serviceAccountName: 'fresh', containers: [] }));
    expect(caughtUp).toBe(true);
    expect(spec.serviceAccountName).toBe('fresh');
  });

  it('leaves a create in a missing namespace to the namespace check (its 404)', async () => {
    const { hooks } = plugin({}, { namespaces: [] });
    const c = call({ containers: [] });
    const spec = await admit(hooks, c);
    expect(spec.serviceAccountName).toBe('default');
    expect(spec.volumes).toBeUndefined();
  });

  it('honours automountServiceAccountToken on the account and the pod, the pod winning', async () => {
    const { hooks } = plugin({ default: {}, quiet: { automountServiceAccountToken: false }, loud: { automountServiceAccountToken: true } });
    const mounted = (s: Obj) => (s.volumes as Obj[] | undefined)?.length ?? 0;
    expect(mounted(await admit(hooks, call({ serviceAccountName: 'quiet', containers: [{ name: 'a', image: 'x' }] })))).toBe(0);
    expect(mounted(await admit(hooks, call({ serviceAccountName: 'quiet', automountServiceAccountToken: true, containers: [{ name: 'a', image: 'x' }] })))).toBe(1);
    expect(mounted(await admit(hooks, call({ serviceAccountName: 'loud', automountServiceAccountToken: false, containers: [{ name: 'a', image: 'x' }] })))).toBe(0);
    expect(mounted(await admit(hooks, call({ automountServiceAccountToken: false, containers: [{ name: 'a', image: 'x' }] })))).toBe(0);
  });

  it('adds the volume once: an existing token volume is reused and a container mounting the path keeps its mount', async () => {
    const { hooks } = plugin();
    const spec = await admit(
      hooks,
      call({
        volumes: [{ name: 'orch-api-access-abcde', projected: { sources: [] } }, { name: 'mine', emptyDir: {} }],
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'x', volumeMounts: [{ name: 'mine', mountPath: PATH }] },
        ],
      }),
    );
    expect((spec.volumes as Obj[]).map((v) => v.name)).toEqual(['orch-api-access-abcde', 'mine']);
    expect((spec.containers as Obj[])[0]!.volumeMounts).toEqual([{ name: 'orch-api-access-abcde', readOnly: true, mountPath: PATH }]);
    expect((spec.containers as Obj[])[1]!.volumeMounts).toEqual([{ name: 'mine', mountPath: PATH }]);
    // every container mounting the path already: no volume
    const none = await admit(hooks, call({ volumes: [{ name: 'mine', emptyDir: {} }], containers: [{ name: 'b', image: 'x', volumeMounts: [{ name: 'mine', mountPath: PATH }] }] }));
    expect((none.volumes as Obj[]).map((v) => v.name)).toEqual(['mine']);
  });

  it('changes nothing on update, ephemeral containers included (kube mutates creates only)', async () => {
    const { hooks } = plugin();
    const c = call({ serviceAccountName: 'default', containers: [{ name: 'a', image: 'x' }], ephemeralContainers: [{ name: 'dbg', image: 'x' }] }, {}, 'UPDATE');
    const before = JSON.stringify(c.object);
    await admit(hooks, c);
    expect(JSON.stringify(c.object)).toBe(before);
  });

  it('copies the account\'s imagePullSecrets to a pod that names none', async () => {
    const { hooks } = plugin({ default: { imagePullSecrets: [{ name: 'reg' }] } });
    expect((await admit(hooks, call({ containers: [] }))).imagePullSecrets).toEqual([{ name: 'reg' }]);
    expect((await admit(hooks, call({ imagePullSecrets: [{ name: 'own' }], containers: [] }))).imagePullSecrets).toEqual([{ name: 'own' }]);
  });

  it('leaves mirror pods alone and refuses those that reference accounts, secrets or token projections', async () => {
    const { hooks } = plugin();
    for (const key of ['orch.io/config.mirror', 'kubernetes.io/config.mirror']) {
      const spec = await admit(hooks, call({ containers: [{ name: 'a', image: 'x' }] }, { annotations: { [key]: 'h' } }));
      expect(spec.serviceAccountName).toBeUndefined();
      expect(spec.volumes).toBeUndefined();
    }
    const mirror = { annotations: { 'orch.io/config.mirror': 'h' } };
    expect(await refusal(admit(hooks, call({ serviceAccountName: 'default', containers: [] }, mirror)))).toBe('pods "p" is forbidden: a mirror pod may not reference service accounts');
    expect(await refusal(admit(hooks, call({ containers: [{ name: 'a', image: 'x', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] }, mirror)))).toBe(
      'pods "p" is forbidden: a mirror pod may not reference secrets',
    );
    expect(await refusal(admit(hooks, call({ containers: [], volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] }, mirror)))).toBe(
      'pods "p" is forbidden: a mirror pod may not use ServiceAccountToken volume projections',
    );
  });

  it('checks again after the mutating webhooks: an account removed by one is refused', async () => {
    const { hooks } = plugin();
    const c = call({ containers: [] });
    const out = (await hooks.mutate(c))!;
    (out as unknown as { spec: Obj }).spec.serviceAccountName = 'gone';
    expect(await refusal(hooks.validateAdmission({ ...c, object: out }))).toContain('serviceaccount "gone" not found');
  });
});
