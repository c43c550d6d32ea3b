// Admission plugins chosen by `--enable-admission-plugins` and
// `--disable-admission-plugins` (spec 001 §5.15). Each plugin is a set of
// write hooks of the generic store (src/registry/generic-store.ts WriteHooks),
// which see the requester, the sub-resource, the new and the stored object.
// They run after the server's own hooks. Default on: NodeRestriction (kube
// leaves it off by default but every kubeadm cluster enables it;
// docs/authorization.md), DefaultTolerationSeconds, ServiceAccount and
// CertificateSubjectRestriction and PodSecurity (on in kube too).

import type { WriteHooks } from '../registry/generic-store.js';
import { sequenceHooks } from '../registry/write-hooks.js';
import { NODE_RESTRICTION, nodeRestrictionHooks } from '../auth/authz/node/restriction.js';
import { DEFAULT_TOLERATION_SECONDS, type DefaultTolerationOptions, defaultTolerationHooks } from '../registry/default-tolerations.js';
import { SERVICE_ACCOUNT, type ServiceAccountAdmissionOptions, serviceAccountAdmission } from '../registry/service-account-admission.js';
import { CERTIFICATE_SUBJECT_RESTRICTION, certificateSubjectRestrictionHooks } from '../registry/csr-subject-restriction.js';
import { POD_SECURITY, podSecurityHooks } from '../registry/pod-security/admission.js';

export interface AdmissionPluginOptions {
  enable?: string[];
  disable?: string[];
  /** `--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds` (300) */
  defaultTolerations?: DefaultTolerationOptions;
}

/** what plugins read from the server: stored objects and randomness (the composition root provides them) */
export type AdmissionPluginDeps = Pick<ServiceAccountAdmissionOptions, 'lookup' | 'random' | 'catchUp'>;

const PLUGINS: Record<string, (apiDomain: string, o: AdmissionPluginOptions, deps: AdmissionPluginDeps) => WriteHooks> = {
  [NODE_RESTRICTION]: nodeRestrictionHooks,
  // src/registry/default-tolerations.ts (issue 13): not-ready/unreachable tolerations of 300 s on new pods
  [DEFAULT_TOLERATION_SECONDS]: (d, o) => defaultTolerationHooks(d, o.defaultTolerations),
  // src/registry/service-account-admission.ts (spec 001 §5.5): default account, its existence, the token volume
  [SERVICE_ACCOUNT]: (d, _o, deps) => serviceAccountAdmission({ apiDomain: d, ...deps }),
  // src/registry/csr-subject-restriction.ts: no system:masters client certificates through the API server client signer
  [CERTIFICATE_SUBJECT_RESTRICTION]: (d) => certificateSubjectRestrictionHooks(d),
  // src/registry/pod-security/: the namespace's pod-security.kubernetes.io/enforce and warn levels on pods
  [POD_SECURITY]: (d, _o, deps) => podSecurityHooks({ apiDomain: d, lookup: deps.lookup }),
};

export const DEFAULT_ADMISSION_PLUGINS = [NODE_RESTRICTION, DEFAULT_TOLERATION_SECONDS, SERVICE_ACCOUNT, CERTIFICATE_SUBJECT_RESTRICTION, POD_SECURITY];

/** the enabled plugin names; an unknown name is a startup error listing the known ones */
export function enabledAdmissionPlugins(o: AdmissionPluginOptions): string[] {
  for (const n of [...(o.enable ?? []), ...(o.disable ?? [])]) {
    if (!PLUGINS[n]) throw new Error(`admission plugin "${n}" is unknown (known: ${Object.keys(PLUGINS).sort().join(', ')})`);
  }
  const both = (o.enable ?? []).filter((n) => (o.disable ?? []).includes(n));
  if (both.length > 0) throw new Error(`admission plugin "${both[0]}" is both enabled and disabled (--enable-admission-plugins, --disable-admission-plugins)`);
  const names = new Set([...DEFAULT_ADMISSION_PLUGINS, ...(o.enable ?? [])]);
  for (const n of o.disable ?? []) names.delete(n);
  return [...names];
}

/**
 * `base` followed by every enabled plugin, then `after` (the webhook and
 * policy chain: kube runs its built-in plugins first), as one WriteHooks (run
 * by the registry's write path)
 */
export function admissionHooks(base: WriteHooks, o: AdmissionPluginOptions, apiDomain: string, deps: AdmissionPluginDeps, after: WriteHooks = {}): ReturnType<typeof sequenceHooks> {
  return sequenceHooks([{ ...base }, ...enabledAdmissionPlugins(o).map((n) => PLUGINS[n]!(apiDomain, o, deps)), after]);
}
