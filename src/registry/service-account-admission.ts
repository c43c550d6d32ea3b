// The ServiceAccount admission plugin (kube-apiserver's
// plugin/pkg/admission/serviceaccount, on by default; spec 001 §5.5: "Pods
// use the account named in spec.serviceAccountName; tokens are mounted into
// pods at a predictable place"). On pod create:
//
// * `spec.serviceAccountName` defaults to `default` (and its deprecated
//   mirror `spec.serviceAccount` follows it, as kube's v1 conversion writes);
// * the account must exist, else 403 `pods "x" is forbidden: error looking up
//   service account ns/name: serviceaccount "name" not found` (the `default`
//   account is looked for a while longer: the namespace-defaults controller
//   creates it just after its namespace, as kube retries 10 times);
// * unless `automountServiceAccountToken` is false (the pod's setting wins
//   over the account's), the projected volume `<word>-api-access-<5 chars>`
//   (a bound token, the cluster CA ConfigMap, the namespace) is added once and
//   mounted read-only at the well-known path in every container and init
//   container that mounts nothing there (kube leaves ephemeral containers
//   alone: its Admit mutates creates only);
// * the account's `imagePullSecrets` go to a pod that names none;
// * mirror pods (annotation `<domain>/config.mirror` or kube's) are not
//   changed, and may not name an account, reference secrets or project tokens.
//
// It runs for every pod create, the server's own controllers' included (in
// kube they are clients and are admitted too): a ReplicaSet's pods get their
// tokens. Mutation runs before the mutating webhooks and the check again
// before the validating ones, kube's order (docs/admission.md).

import { sleep as sleepOn, systemClock } from '../core/clock.js';
import { forbidden } from '../core/errors.js';
import { productWordOf, rootCAConfigMapName, serviceAccountMountPath } from '../core/product-names.js';
import type { AdmissionCall, WriteHooks } from './write-options.js';
import type { ApiObject, JSONValue } from './types.js';
import { coreResources } from './write-hooks.js';

export const SERVICE_ACCOUNT = 'ServiceAccount';
export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
/** kube's WarnOnlyBoundTokenExpirationSeconds: an hour and 7 s, so a token of this lifetime is known to be an automounted one */
export const AUTOMOUNT_TOKEN_EXPIRATION_SECONDS = 3607;

/** kube's names.SimpleNameGenerator alphabet (no vowels, no look-alikes) */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const DEFAULT_ACCOUNT_ATTEMPTS = 10;

export interface ServiceAccountAdmissionOptions {
  apiDomain: string;
  /** a ServiceAccount or Namespace from the member's state, undefined when absent */
  lookup(resource: 'serviceaccounts' | 'namespaces', namespace: string, name: string): ApiObject | undefined;
  /**
   * makes the member's state as new as every acknowledged write (a Raft
   * follower's ReadIndex): asked once after a miss, as kube's plugin falls back
   * from its informer to a live GET, so an account just created on the leader is found
   */
  catchUp?: () => Promise<void>;
  /** a float in [0, 1) for the volume name and the retry pause */
  random: () => number;
  sleep?: (ms: number) => Promise<void>;
}

type Obj = Record<string, JSONValue>;
const isObj = (v: JSONValue | undefined): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const objects = (v: JSONValue | undefined): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** the annotations that make a pod the mirror of a static pod (orch's and kube's) */
export function mirrorPodAnnotations(apiDomain: string): string[] {
  return [`${apiDomain}/config.mirror`, 'kubernetes.io/config.mirror'];
}

/** the projected volume kube's plugin adds (TokenVolumeSource), the CA ConfigMap named after the product */
export function tokenVolumeSource(apiDomain: string): Obj {
  return {
    sources: [
      { serviceAccountToken: { expirationSeconds: AUTOMOUNT_TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: rootCAConfigMapName(apiDomain), items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
    defaultMode: 420,
  };
}

export function serviceAccountAdmission(o: ServiceAccountAdmissionOptions): Required<Pick<WriteHooks, 'mutate' | 'validateAdmission' | 'appliesTo'>> {
  const mirrorKeys = mirrorPodAnnotations(o.apiDomain);
  const mountPath = serviceAccountMountPath(o.apiDomain);
  const volumePrefix = `${productWordOf(o.apiDomain)}-api-access-`;
  const sleep = o.sleep ?? ((ms: number) => sleepOn(systemClock, ms));
  const isPodCreate = (c: AdmissionCall) => c.operation === 'CREATE' && c.def.group === '' && c.def.resource === 'pods' && c.object !== undefined;
  const isMirror = (pod: ApiObject) => mirrorKeys.some((k) => pod.metadata?.annotations?.[k] !== undefined);
  const deny = (c: AdmissionCall, message: string): never => {
    throw forbidden(`pods ${JSON.stringify(c.name)} is forbidden: ${message}`, { name: c.name, kind: 'pods' });
  };
  const notFound = (c: AdmissionCall, name: string): never => deny(c, `error looking up service account ${c.namespace}/${name}: serviceaccount ${JSON.stringify(name)} not found`);

  /** kube's Validate for mirror pods: they reference nothing the node could not read (NodeRestriction) */
  const checkMirror = (c: AdmissionCall, spec: Obj): void => {
    if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') deny(c, 'a mirror pod may not reference service accounts');
    if (podSecretNames(spec).length > 0) deny(c, 'a mirror pod may not reference secrets');
    for (const v of objects(spec.volumes)) {
      const sources = isObj(v.projected) ? objects(v.projected.sources) : [];
      if (sources.some((s) => s.serviceAccountToken !== undefined)) deny(c, 'a mirror pod may not use ServiceAccountToken volume projections');
    }
  };

  /** the account, waiting a little for `default` (kube: 10 attempts 100–200 ms apart); none when the namespace is missing */
  const find = async (c: AdmissionCall, name: string): Promise<ApiObject | undefined> => {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT_NAME ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
    const pause = 100 + Math.floor(o.random() * 100);
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await sleep(pause);
      let sa = o.lookup('serviceaccounts', c.namespace, name);
      if (!sa && i === 0 && o.catchUp) {
        await o.catchUp();
        sa = o.lookup('serviceaccounts', c.namespace, name);
      }
      if (sa) return sa;
      // no namespace: the store's 404 for it follows, as kube's NamespaceLifecycle plugin answers first
      if (!o.lookup('namespaces', '', c.namespace)) return undefined;
    }
    return undefined;
  };

  const mountToken = (spec: Obj): void => {
    const volumes = objects(spec.volumes);
    const existing = volumes.find((v) => typeof v.name === 'string' && v.name.startsWith(volumePrefix));
    const names = new Set(volumes.map((v) => v.name));
    let name = typeof existing?.name === 'string' ? existing.name : '';
    while (name === '' || (!existing && names.has(name))) {
      name = volumePrefix + Array.from({ length: 5 }, () => NAME_ALPHABET[Math.floor(o.random() * NAME_ALPHABET.length)]).join('');
    }
    let needed = false;
    for (const field of ['initContainers', 'containers']) {
      for (const ct of objects(spec[field])) {
        const mounts = objects(ct.volumeMounts);
        // a container that mounts something at the path already keeps it (kube's rule)
        if (mounts.some((m) => m.mountPath === mountPath)) continue;
        ct.volumeMounts = [...mounts, { name, readOnly: true, mountPath }];
        needed = true;
      }
    }
    if (needed && !existing) spec.volumes = [...volumes, { name, projected: tokenVolumeSource(o.apiDomain) }];
  };

  return {
    appliesTo: coreResources('pods'),
    async mutate(c) {
      if (!isPodCreate(c)) return c.object;
      const pod = c.object!;
      const spec = ((pod as { spec?: Obj }).spec ??= {});
      if (isMirror(pod)) {
        checkMirror(c, spec);
        return pod;
      }
      if (typeof spec.serviceAccountName !== 'string' || spec.serviceAccountName === '') spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT_NAME;
      spec.serviceAccount = spec.serviceAccountName;
      const sa = await find(c, spec.serviceAccountName);
      if (!sa) {
        if (!o.lookup('namespaces', '', c.namespace)) return pod;
        return notFound(c, spec.serviceAccountName);
      }
      // the pod's preference wins, then the account's; mounted unless one of them says false
      const podSays = spec.automountServiceAccountToken;
      const saSays = (sa as { automountServiceAccountToken?: JSONValue }).automountServiceAccountToken;
      const automount = typeof podSays === 'boolean' ? podSays : typeof saSays === 'boolean' ? saSays : true;
      if (automount) mountToken(spec);
      const pullSecrets = objects((sa as { imagePullSecrets?: JSONValue }).imagePullSecrets);
      if (objects(spec.imagePullSecrets).length === 0 && pullSecrets.length > 0) {
        spec.imagePullSecrets = pullSecrets.map((s) => ({ name: s.name ?? '' }));
      }
      return pod;
    },
    // kube's Validate, after the mutating webhooks: what they changed is checked too
    async validateAdmission(c) {
      if (!isPodCreate(c)) return;
      const pod = c.object!;
      const spec = ((pod as { spec?: Obj }).spec ?? {}) as Obj;
      if (isMirror(pod)) return checkMirror(c, spec);
      const name = spec.serviceAccountName;
      if (typeof name !== 'string' || name === '') return deny(c, `no service account specified for pod ${c.namespace}/${c.name}`);
      if (!o.lookup('serviceaccounts', c.namespace, name) && o.lookup('namespaces', '', c.namespace)) notFound(c, name);
    },
  };
}

/** the Secrets a pod spec names (kube's VisitPodSecretNames over every container) */
export function podSecretNames(spec: Obj): string[] {
  const out: string[] = [];
  const add = (v: JSONValue | undefined) => {
    if (typeof v === 'string' && v !== '') out.push(v);
  };
  for (const s of objects(spec.imagePullSecrets)) add(s.name);
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const ct of objects(spec[field])) {
      for (const ef of objects(ct.envFrom)) if (isObj(ef.secretRef)) add(ef.secretRef.name);
      for (const e of objects(ct.env)) {
        const from = e.valueFrom;
        if (isObj(from) && isObj(from.secretKeyRef)) add(from.secretKeyRef.name);
      }
    }
  }
  for (const v of objects(spec.volumes)) {
    if (isObj(v.secret)) add(v.secret.secretName);
    for (const s of isObj(v.projected) ? objects(v.projected.sources) : []) if (isObj(s.secret)) add(s.secret.name);
    for (const kind of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos', 'csi']) {
      const src = v[kind];
      if (!isObj(src)) continue;
      add(src.secretName);
      for (const k of ['secretRef', 'nodePublishSecretRef']) if (isObj(src[k])) add((src[k] as Obj).name);
    }
  }
  return out;
}
