// What kube 1.32 refuses in a Service update beyond the create rules
// (pkg/apis/core/validation ValidateServiceUpdate), and how it lines
// `clusterIP` up with `clusterIPs` before it looks (the service REST's
// patchAllocatedValues and normalizeClusterIPs). A Service may gain or drop
// a secondary cluster IP or IP family, never change the primary ones; its
// loadBalancerClass and health check node port stay while it keeps needing them.

import { isQualifiedName } from '../../machinery/schema/object-meta.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { forbidden, goSlice, goStringPtr, invalid, invalidShown } from './field-errors.js';

type Spec = Record<string, JSONValue>;

const specOf = (o: ApiObject): Spec => ((o as { spec?: Spec }).spec ?? {});
const strings = (v: JSONValue | undefined): string[] => (Array.isArray(v) ? v.map(String) : []);
const sameList = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const headless = (spec: Spec): boolean => {
  const ips = strings(spec.clusterIPs);
  return ips.length === 1 && ips[0] === 'None';
};
/** kube's NeedsHealthCheck: a LoadBalancer that keeps external traffic on the node it arrives at */
export const needsHealthCheck = (spec: Spec): boolean => spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';

/**
 * kube's normalizeClusterIPs on update: `clusterIPs` dropped by an old client that kept `clusterIP` comes
 * back; a changed `clusterIP` with `clusterIPs` left as they were becomes `clusterIPs[0]` (so validation
 * sees it there), a cleared one clears them
 */
export function normalizeClusterIPs(spec: Spec, oldSpec: Spec): void {
  const before = oldSpec.clusterIP ?? '';
  const after = spec.clusterIP ?? '';
  if (strings(oldSpec.clusterIPs).length > 0 && strings(spec.clusterIPs).length === 0 && before === after) spec.clusterIPs = oldSpec.clusterIPs!;
  if (before === after || !sameList(strings(oldSpec.clusterIPs), strings(spec.clusterIPs))) return;
  if (before !== '' && after === '') delete spec.clusterIPs;
  else spec.clusterIPs = [after];
}

/** kube's patchAllocatedValues for the health check node port: an update that leaves it out keeps it */
export function keepHealthCheckNodePort(spec: Spec, oldSpec: Spec): void {
  if (needsHealthCheck(spec) && needsHealthCheck(oldSpec) && !spec.healthCheckNodePort && oldSpec.healthCheckNodePort !== undefined) {
    spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
  }
}

/** kube's validateLoadBalancerClassField: only LoadBalancer Services carry one, a qualified name, fixed while they stay LoadBalancer */
export function loadBalancerClassErrors(o: ApiObject, old?: ApiObject): FieldError[] {
  const spec = specOf(o);
  const cls = spec.loadBalancerClass;
  const errs: FieldError[] = [];
  if (old && spec.type === 'LoadBalancer' && specOf(old).type === 'LoadBalancer' && (cls ?? null) !== (specOf(old).loadBalancerClass ?? null)) {
    errs.push(invalidShown('spec.loadBalancerClass', goStringPtr(cls), 'may not change once set'));
  }
  if (cls === undefined || cls === null) return errs;
  if (spec.type !== 'LoadBalancer') return [...errs, forbidden('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'")];
  return [...errs, ...isQualifiedName(String(cls)).map((m) => invalid('spec.loadBalancerClass', cls, m))];
}

/** kube's ValidateServiceUpdate, the update-only part */
export function serviceUpdateErrors(o: ApiObject, old: ApiObject): FieldError[] {
  const spec = specOf(o);
  const prev = specOf(old);
  const errs = [...clusterIPsUpdateErrors(spec, prev), ...ipFamiliesUpdateErrors(spec, prev), ...loadBalancerClassErrors(o, old)];
  if (needsHealthCheck(spec) && needsHealthCheck(prev) && (spec.healthCheckNodePort ?? 0) !== (prev.healthCheckNodePort ?? 0)) {
    errs.push(forbidden('spec.healthCheckNodePort', 'field is immutable'));
  }
  return errs;
}

const ALONE = "must be set to 'SingleStack' when releasing the secondary";

/** kube's validateUpgradeDowngradeClusterIPs */
function clusterIPsUpdateErrors(spec: Spec, prev: Spec): FieldError[] {
  if (spec.type === 'ExternalName' || prev.type === 'ExternalName' || (headless(spec) && headless(prev))) return [];
  const was = strings(prev.clusterIPs);
  const now = strings(spec.clusterIPs);
  const shown = goSlice('string', spec.clusterIPs);
  const changed = (i: number): FieldError => invalidShown(`spec.clusterIPs[${i}]`, shown, 'may not change once set');
  if (was.length === now.length) return was.flatMap((ip, i) => (ip === now[i] ? [] : [changed(i)]));
  if (was.length < now.length) return was.length > 0 && now[0] !== was[0] ? [changed(0)] : [];
  const errs: FieldError[] = [];
  if (now.length === 0) errs.push(invalidShown('spec.clusterIPs[0]', shown, 'primary clusterIP can not be unset'));
  else if (now[0] !== was[0]) errs.push(changed(0));
  if (now.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') errs.push(invalidShown('spec.ipFamilyPolicy', goStringPtr(spec.ipFamilyPolicy), `${ALONE} clusterIP`));
  return errs;
}

/** kube's validateUpgradeDowngradeIPFamilies (whose primary-family errors show the cluster IPs, as kube's do) */
function ipFamiliesUpdateErrors(spec: Spec, prev: Spec): FieldError[] {
  if (spec.type === 'ExternalName' || prev.type === 'ExternalName' || headless(spec) !== headless(prev) || headless(spec)) return [];
  const was = strings(prev.ipFamilies);
  const now = strings(spec.ipFamilies);
  const at = 'spec.ipFamilies[0]';
  const primaryChanged = now.length > 0 && was.length > 0 && now[0] !== was[0];
  if (was.length === now.length) {
    return was.flatMap((f, i) => (f === now[i] ? [] : [invalidShown(at, goSlice('core.IPFamily', spec.ipFamilies), 'may not change once set')]));
  }
  const ipsChanged = primaryChanged ? [invalidShown(at, goSlice('string', spec.clusterIPs), 'may not change once set')] : [];
  if (was.length < now.length) return ipsChanged;
  const errs: FieldError[] = [];
  if (strings(spec.clusterIPs).length === 0) errs.push(invalidShown(at, goSlice('core.IPFamily', spec.ipFamilies), 'primary ipFamily can not be unset'));
  errs.push(...ipsChanged);
  if (now.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') errs.push(invalidShown('spec.ipFamilyPolicy', goStringPtr(spec.ipFamilyPolicy), `${ALONE} ipFamily`));
  return errs;
}
