// Admission plugins chosen by `--enable-admission-plugins` and
// `--disable-admission-plugins` (spec 001 §5.15). Each plugin is a set of
// write hooks of the generic store (src/registry/generic-store.ts WriteHooks),
// which see the requester, the sub-resource, the new and the stored object.
// They run after the server's own hooks. Default on: NodeRestriction (kube
// leaves it off by default but every kubeadm cluster enables it;
// docs/authorization.md) and, as in kube, LimitRanger, ServiceAccount,
// TaintNodesByCondition, PodSecurity, Priority, DefaultTolerationSeconds, DefaultStorageClass,
// StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, CertificateSubjectRestriction,
// DefaultIngressClass and ResourceQuota (last,
// after the webhooks and policies, as kube orders it).

import type { WriteHooks } from '../registry/generic-store.js';
import { sequenceHooks } from '../registry/write-hooks.js';
import { NODE_RESTRICTION, nodeRestrictionHooks } from '../auth/authz/node/restriction.js';
import { DEFAULT_TOLERATION_SECONDS, type DefaultTolerationOptions, defaultTolerationHooks } from '../registry/default-tolerations.js';
import { SERVICE_ACCOUNT, type ServiceAccountAdmissionOptions, serviceAccountAdmission } from '../registry/service-account-admission.js';
import { CERTIFICATE_SUBJECT_RESTRICTION, certificateSubjectRestrictionHooks } from '../registry/csr-subject-restriction.js';
import { type QuotaAccess, RESOURCE_QUOTA, resourceQuotaAdmission } from '../registry/quota/admission.js';
import { LIMIT_RANGER, type LimitRangeAccess, limitRangerAdmission } from '../registry/quota/limit-ranger.js';
import { PRIORITY, type PriorityAdmissionOptions, priorityAdmission } from '../registry/priority-admission.js';
import { DEFAULT_INGRESS_CLASS, DEFAULT_STORAGE_CLASS, defaultIngressClassAdmission, defaultStorageClassAdmission } from '../registry/default-class-admission.js';
import { STORAGE_OBJECT_IN_USE_PROTECTION, storageProtectionAdmission } from '../registry/storage-protection-admission.js';
import { RUNTIME_CLASS, runtimeClassAdmission } from '../registry/runtime-class-admission.js';
import { PERSISTENT_VOLUME_CLAIM_RESIZE, pvcResizeAdmission } from '../registry/pvc-resize-admission.js';
import { TAINT_NODES_BY_CONDITION, nodeTaintAdmission } from '../registry/node-taint-admission.js';
import type { ApiObject } from '../registry/types.js';
import { POD_SECURITY, type PodSecurityAccess, podSecurityAdmission } from '../registry/podsecurity/admission.js';
import type { Clock } from '../core/clock.js';

export interface AdmissionPluginOptions {
  enable?: string[];
  disable?: string[];
  /** `--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds` (300) */
  defaultTolerations?: DefaultTolerationOptions;
}

/** what plugins read from the server: stored objects and randomness (the composition root provides them) */
export type AdmissionPluginDeps = Pick<ServiceAccountAdmissionOptions, 'lookup' | 'random' | 'catchUp'> & {
  /** the namespace's quotas and their charge (the ResourceQuota plugin) */
  quotas: QuotaAccess;
  /** the namespace's LimitRanges (the LimitRanger plugin) */
  limitRanges: LimitRangeAccess;
  /** the cluster's StorageClasses and IngressClasses (the default class plugins) */
  storageClasses: () => readonly ApiObject[];
  ingressClasses: () => readonly ApiObject[];
  /** the cluster's RuntimeClasses (the RuntimeClass plugin) */
  runtimeClasses: () => readonly ApiObject[];
  /** namespaces and their pods (the PodSecurity plugin) */
  podSecurity: PodSecurityAccess;
  clock: Clock;
} & Pick<PriorityAdmissionOptions, 'priorityClasses'>;

const PLUGINS: Record<string, (apiDomain: string, o: AdmissionPluginOptions, deps: AdmissionPluginDeps) => WriteHooks> = {
  [NODE_RESTRICTION]: nodeRestrictionHooks,
  // src/registry/quota/limit-ranger.ts: LimitRange defaults on new pods, min/max/ratio on pods and claims
  [LIMIT_RANGER]: (_d, _o, deps) => limitRangerAdmission(deps.limitRanges),
  // src/registry/priority-admission.ts: spec.priority and preemptionPolicy from the pod's PriorityClass
  [PRIORITY]: (d, _o, deps) => priorityAdmission({ apiDomain: d, priorityClasses: deps.priorityClasses }),
  // src/registry/default-class-admission.ts: the default StorageClass / IngressClass on new claims / Ingresses
  [DEFAULT_STORAGE_CLASS]: (_d, _o, deps) => defaultStorageClassAdmission(deps.storageClasses),
  [DEFAULT_INGRESS_CLASS]: (d, _o, deps) => defaultIngressClassAdmission(`networking.${d}`, deps.ingressClasses),
  // src/registry/storage-protection-admission.ts: the protection finalizers on new claims and volumes
  [STORAGE_OBJECT_IN_USE_PROTECTION]: () => storageProtectionAdmission(),
  // src/registry/pvc-resize-admission.ts: a claim grows only when bound and its StorageClass allows expansion
  [PERSISTENT_VOLUME_CLAIM_RESIZE]: (_d, _o, deps) => pvcResizeAdmission(deps.storageClasses),
  // src/registry/node-taint-admission.ts: the not-ready NoSchedule taint on new Nodes
  [TAINT_NODES_BY_CONDITION]: (d) => nodeTaintAdmission(d),
  // src/registry/runtime-class-admission.ts: a new pod's RuntimeClass must exist; its overhead and scheduling applied
  [RUNTIME_CLASS]: (_d, _o, deps) => runtimeClassAdmission({ runtimeClasses: deps.runtimeClasses, catchUp: deps.catchUp }),
  // src/registry/default-tolerations.ts (issue 13): not-ready/unreachable tolerations of 300 s on new pods
  [DEFAULT_TOLERATION_SECONDS]: (d, o) => defaultTolerationHooks(d, o.defaultTolerations),
  // src/registry/service-account-admission.ts (spec 001 §5.5): default account, its existence, the token volume
  [SERVICE_ACCOUNT]: (d, _o, deps) => serviceAccountAdmission({ apiDomain: d, ...deps }),
  // src/registry/podsecurity/: Pod Security Standards by namespace labels (enforce, audit, warn)
  [POD_SECURITY]: (_d, _o, deps) => podSecurityAdmission(deps.podSecurity),
  // src/registry/csr-subject-restriction.ts: no system:masters client certificates through the API server client signer
  [CERTIFICATE_SUBJECT_RESTRICTION]: (d) => certificateSubjectRestrictionHooks(d),
  // src/registry/quota/admission.ts: writes past a ResourceQuota refused, admitted ones charged to it
  [RESOURCE_QUOTA]: (_d, _o, deps) => resourceQuotaAdmission(deps.quotas, deps.clock),
};

/** plugins kube runs after the webhooks and policies */
const AFTER_CHAIN = new Set([RESOURCE_QUOTA]);

/** in kube's order where it matters: LimitRanger's defaults before the ServiceAccount plugin's */
export const DEFAULT_ADMISSION_PLUGINS = [
  NODE_RESTRICTION, LIMIT_RANGER, SERVICE_ACCOUNT, TAINT_NODES_BY_CONDITION, POD_SECURITY, PRIORITY, DEFAULT_TOLERATION_SECONDS, DEFAULT_STORAGE_CLASS, STORAGE_OBJECT_IN_USE_PROTECTION,
  PERSISTENT_VOLUME_CLAIM_RESIZE, RUNTIME_CLASS, CERTIFICATE_SUBJECT_RESTRICTION, DEFAULT_INGRESS_CLASS, RESOURCE_QUOTA,
];

/**
 * kube's plugins that are part of orch's write path, always on: namespace
 * lifecycle (the store's namespace check), the webhook and policy chain, the
 * CertificateSigningRequest checks. Named in a kube-apiserver command line,
 * they are accepted; a request to turn one off is warned about.
 */
const ALWAYS_ON = new Set(['NamespaceLifecycle', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'CertificateApproval', 'CertificateSigning']);
/** kube's default-on plugins orch does not build: accepted with a warning, so a kube-apiserver command line still starts */
const NOT_BUILT_DEFAULTS = new Set(['ClusterTrustBundleAttest']);
/** kube's opt-in plugins orch does not build: asking for one is a startup error, as it would silently not protect */
const NOT_BUILT_OPT_IN = new Set([
  'AlwaysAdmit', 'AlwaysDeny', 'AlwaysPullImages', 'DenyServiceExternalIPs', 'EventRateLimit', 'ExtendedResourceToleration', 'ImagePolicyWebhook',
  'LimitPodHardAntiAffinityTopology', 'NamespaceAutoProvision', 'NamespaceExists', 'OwnerReferencesPermissionEnforcement', 'PodNodeSelector',
  'PodTolerationRestriction',
]);

/** what the server should log about the flags' plugin names it accepts without acting on them */
export function admissionPluginWarnings(o: AdmissionPluginOptions): string[] {
  return [
    ...(o.disable ?? []).filter((n) => ALWAYS_ON.has(n)).map((n) => `admission plugin ${n} is part of orch's write path and stays on`),
    ...(o.enable ?? []).filter((n) => NOT_BUILT_DEFAULTS.has(n)).map((n) => `admission plugin ${n} is not built in orch; ignored`),
  ];
}

/** the enabled plugin names; an unknown name, or an opt-in kube plugin orch lacks, is a startup error */
export function enabledAdmissionPlugins(o: AdmissionPluginOptions): string[] {
  const accepted = (n: string) => ALWAYS_ON.has(n) || NOT_BUILT_DEFAULTS.has(n);
  for (const n of o.enable ?? []) {
    if (NOT_BUILT_OPT_IN.has(n)) throw new Error(`admission plugin "${n}" is not built in orch (built: ${Object.keys(PLUGINS).sort().join(', ')})`);
  }
  for (const n of [...(o.enable ?? []), ...(o.disable ?? [])]) {
    if (!PLUGINS[n] && !accepted(n) && !NOT_BUILT_OPT_IN.has(n)) throw new Error(`admission plugin "${n}" is unknown (known: ${Object.keys(PLUGINS).sort().join(', ')})`);
  }
  const both = (o.enable ?? []).filter((n) => (o.disable ?? []).includes(n));
  if (both.length > 0) throw new Error(`admission plugin "${both[0]}" is both enabled and disabled (--enable-admission-plugins, --disable-admission-plugins)`);
  const names = new Set([...DEFAULT_ADMISSION_PLUGINS, ...(o.enable ?? []).filter((n) => PLUGINS[n])]);
  for (const n of o.disable ?? []) names.delete(n);
  return [...names];
}

/**
 * `base` followed by every enabled plugin, then `after` (the webhook and
 * policy chain: kube runs its built-in plugins first), as one WriteHooks (run
 * by the registry's write path)
 */
export function admissionHooks(base: WriteHooks, o: AdmissionPluginOptions, apiDomain: string, deps: AdmissionPluginDeps, after: WriteHooks = {}): ReturnType<typeof sequenceHooks> {
  const enabled = enabledAdmissionPlugins(o);
  const build = (names: string[]) => names.map((n) => PLUGINS[n]!(apiDomain, o, deps));
  return sequenceHooks([{ ...base }, ...build(enabled.filter((n) => !AFTER_CHAIN.has(n))), after, ...build(enabled.filter((n) => AFTER_CHAIN.has(n)))]);
}
