// The PodSecurity admission plugin (kube-apiserver's, on by default): the
// namespace's `pod-security.kubernetes.io/*` labels choose a Pod Security
// Standards level per mode. enforce refuses a violating pod (403, kube's
// message); warn answers with a `Warning`; audit adds kube's audit
// annotations to the request's audit event. Workload kinds' pod templates
// are warned and audited, never enforced. A namespace write is held to valid
// labels, and a stricter enforce level warns about the pods already there
// (namespace-check.ts). Cluster defaults: privileged everywhere, no exemptions.

import { forbidden, invalid } from '../../core/errors.js';
import { deepEqual } from '../../machinery/meta.js';
import type { AdmissionCall, WriteHooks } from '../write-options.js';
import type { ApiObject } from '../types.js';
import { evaluatePod, forbiddenDetail } from './evaluator.js';
import { existingPodWarnings } from './namespace-check.js';
import type { Container } from './pod-view.js';
import { LABEL_PREFIX, type LevelVersion, type Policy, compareLevels, levelVersionString, policyFromLabels, sameLevelVersion, versionString } from './policy.js';
import { type PodView, isWorkload, podOf, templateOf } from './templates.js';

export const POD_SECURITY = 'PodSecurity';

/** what the plugin reads of this member's state */
export interface PodSecurityAccess {
  namespace(name: string): ApiObject | undefined;
  /** the namespace's pods */
  pods(namespace: string): ApiObject[];
}

/** pod sub-resources that cannot change what the checks read (kube's ignored list) */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

export function podSecurityAdmission(access: PodSecurityAccess): Required<Pick<WriteHooks, 'validateAdmission' | 'appliesTo'>> {
  return {
    appliesTo: (def) => (def.group === '' && (def.resource === 'namespaces' || def.resource === 'pods')) || isWorkload(def.group, def.resource),
    async validateAdmission(c) {
      if (c.operation === 'DELETE' || !c.object) return;
      if (c.def.group === '' && c.def.resource === 'namespaces') return validateNamespace(c, access);
      if (c.def.group === '' && c.def.resource === 'pods') {
        if (IGNORED_POD_SUBRESOURCES.has(c.opts.subresource ?? '')) return;
        if (c.operation === 'UPDATE' && c.oldObject && !significantPodUpdate(c.object, c.oldObject)) return;
        return evaluate(c, access, podOf(c.object), true);
      }
      if (isWorkload(c.def.group, c.def.resource) && !c.opts.subresource) {
        const template = templateOf(c.def.group, c.def.resource, c.object);
        if (template) evaluate(c, access, template, false);
      }
    },
  };
}

const message = (lv: LevelVersion, detail: string) => `PodSecurity "${levelVersionString(lv)}": ${detail}`;

/** kube's EvaluatePod: enforce (pods only), then audit, then warn unless refused */
function evaluate(c: AdmissionCall, access: PodSecurityAccess, pod: PodView, enforce: boolean): void {
  const ns = access.namespace(c.namespace);
  if (!ns) return;
  const { policy, errors } = policyFromLabels(ns.metadata?.labels);
  if (errors.length === 0 && quiet(policy, enforce)) return;
  const cache = new Map<string, ReturnType<typeof evaluatePod>>();
  const run = (lv: LevelVersion) => {
    const key = levelVersionString(lv);
    let v = cache.get(key);
    if (!v) cache.set(key, (v = evaluatePod(lv, pod.meta, pod.spec)));
    return v;
  };
  const annotations = (c.opts.auditAnnotations ??= {});
  if (errors.length > 0) annotations[`${LABEL_PREFIX}error`] = `Failed to parse policy: ${aggregate(errors.map((e) => `${e.field}: ${e.message}`))}`;
  let refused: string | undefined;
  if (enforce) {
    annotations[`${LABEL_PREFIX}enforce-policy`] = levelVersionString(policy.enforce);
    const v = run(policy.enforce);
    if (v.length > 0) refused = `violates ${message(policy.enforce, forbiddenDetail(v))}`;
  }
  const audit = run(policy.audit);
  if (audit.length > 0) annotations[`${LABEL_PREFIX}audit-violations`] = `would violate ${message(policy.audit, forbiddenDetail(audit))}`;
  if (refused) throw forbidden(`pods "${c.name}" is forbidden: ${refused}`, { name: c.name, kind: 'pods' });
  const warn = run(policy.warn);
  if (warn.length > 0) (c.opts.warnings ??= []).push(`would violate ${message(policy.warn, forbiddenDetail(warn))}`);
}

/** nothing to evaluate: every mode that applies is privileged */
function quiet(p: Policy, enforce: boolean): boolean {
  return (!enforce || p.enforce.level === 'privileged') && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

/** kube's utilerrors aggregate text */
function aggregate(list: string[]): string {
  return list.length === 1 ? list[0]! : `[${list.join(', ')}]`;
}

/**
 * kube's isSignificantPodUpdate: only a change the checks could see (an
 * image, a container's seccomp annotation, containers added, an ephemeral
 * container added or changed) is evaluated again
 */
function significantPodUpdate(pod: ApiObject, old: ApiObject): boolean {
  const a = podOf(pod);
  const b = podOf(old);
  const annotation = (p: PodView, c: Container) => p.meta.annotations?.[`container.seccomp.security.alpha.kubernetes.io/${c.name ?? ''}`];
  const changed = (c: Container, o: Container) => c.image !== o.image || annotation(a, c) !== annotation(b, o);
  for (const k of ['containers', 'initContainers'] as const) {
    const now = a.spec[k] ?? [];
    const before = b.spec[k] ?? [];
    if (now.length !== before.length || now.some((c, i) => changed(c, before[i]!))) return true;
  }
  const oldEphemeral = new Map((b.spec.ephemeralContainers ?? []).map((c) => [c.name, c]));
  return (a.spec.ephemeralContainers ?? []).some((c) => {
    const o = oldEphemeral.get(c.name);
    return !o || changed(c, o);
  });
}

/** kube's ValidateNamespace: valid labels, and warnings about existing pods when enforce gets stricter */
function validateNamespace(c: AdmissionCall, access: PodSecurityAccess): void {
  if (c.opts.subresource) return;
  const next = policyFromLabels(c.object?.metadata?.labels);
  if (c.operation === 'CREATE') {
    if (next.errors.length > 0) throw invalid('Namespace', '', c.name, next.errors);
    return;
  }
  const prev = policyFromLabels(c.oldObject?.metadata?.labels);
  if (next.errors.length > 0 && (prev.errors.length === 0 || !deepEqual(next.errors, prev.errors))) throw invalid('Namespace', '', c.name, next.errors);
  const [now, before] = [next.policy.enforce, prev.policy.enforce];
  if (sameLevelVersion(now, before) || now.level === 'privileged') return;
  // relaxing the level at the same version cannot make an existing pod violate it
  if (versionString(now.version) === versionString(before.version) && compareLevels(now.level, before.level) < 1) return;
  const warnings = existingPodWarnings(c.name, now, access.pods(c.name));
  if (warnings.length > 0) (c.opts.warnings ??= []).push(...warnings);
}
