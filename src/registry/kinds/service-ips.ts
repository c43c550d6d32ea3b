// A Service's cluster IPs and IP families as kube 1.32 checks and fills them on
// a single-stack IPv4 cluster: core validation's ValidateServiceClusterIPsRelatedFields
// and the service REST's initIPFamilyFields (pkg/registry/core/service/storage/alloc.go).

import type { FieldError, JSONValue } from '../types.js';
import { duplicate, goSlice, goStringPtr, invalid, invalidShown, notSupported, required } from './field-errors.js';
import { ipErrors, isIPv6 } from './ip-address.js';

type Spec = Record<string, JSONValue>;

const strings = (v: JSONValue | undefined): string[] => (Array.isArray(v) ? v.map(String) : []);
const familyOf = (ip: string): string => (isIPv6(ip) ? 'IPv6' : 'IPv4');
const hasSelector = (spec: Spec): boolean => !!spec.selector && typeof spec.selector === 'object' && Object.keys(spec.selector).length > 0;

/** the cluster IPs validation sees: kube's create-time normalizeClusterIPs fills `clusterIPs` from `clusterIP` */
export function effectiveClusterIPs(spec: Spec): string[] {
  const ips = strings(spec.clusterIPs);
  return ips.length === 0 && typeof spec.clusterIP === 'string' && spec.clusterIP !== '' ? [spec.clusterIP] : ips;
}

/** kube's ValidateServiceClusterIPsRelatedFields */
export function clusterIPsErrors(spec: Spec): FieldError[] {
  if (spec.type === 'ExternalName') return [];
  const errs: FieldError[] = [];
  const ips = effectiveClusterIPs(spec);
  const shown = goSlice('string', ips);
  const clusterIP = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
  if (clusterIP !== '' && ips[0] !== clusterIP) errs.push(ips.length === 0 ? required('spec.clusterIPs') : invalidShown('spec.clusterIPs', shown, 'first value must match `clusterIP`'));
  if (clusterIP === '' && ips.length > 0) errs.push(invalidShown('spec.clusterIPs', shown, 'must be empty when `clusterIP` is not specified'));
  const families = strings(spec.ipFamilies);
  families.forEach((f, i) => {
    if (f !== 'IPv4' && f !== 'IPv6') errs.push(notSupported(`spec.ipFamilies[${i}]`, f, ['IPv4', 'IPv6']));
    if (families.indexOf(f) < i) errs.push(duplicate(`spec.ipFamilies[${i}]`, f));
  });
  let bad = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        bad = true;
        errs.push(invalidShown('spec.clusterIPs', shown, "'None' must be the first and only value"));
      }
      return;
    }
    const e = ipErrors(`spec.clusterIPs[${i}]`, ip);
    bad ||= e.length > 0;
    errs.push(...e);
  });
  if (ips.length > 2) errs.push(invalidShown('spec.clusterIPs', shown, 'may only hold up to 2 values'));
  if (bad) return errs;
  if (ips.length > 1 && (ips.length !== 2 || familyOf(ips[0]!) === familyOf(ips[1]!))) errs.push(invalidShown('spec.clusterIPs', shown, 'may specify no more than one IP for each IP family'));
  if (!(ips.length === 1 && ips[0] === 'None')) {
    ips.forEach((ip, i) => {
      const f = families[i];
      if (f === 'IPv4' && isIPv6(ip)) errs.push(invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (f === 'IPv6' && !isIPv6(ip)) errs.push(invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  }
  return errs;
}

/**
 * kube's initIPFamilyFields on a cluster serving IPv4 only: fills `ipFamilyPolicy` (SingleStack; RequireDualStack
 * for a headless Service without selector) and `ipFamilies`, and returns what it refuses (then nothing is filled).
 * `clusterIPs` is already lined up with `clusterIP`.
 */
export function initIPFamilies(spec: Spec): FieldError[] {
  if (spec.type === 'ExternalName') return [];
  spec.ipFamilyPolicy ??= spec.clusterIP === 'None' && !hasSelector(spec) ? 'RequireDualStack' : 'SingleStack';
  const policy = spec.ipFamilyPolicy;
  const ips = strings(spec.clusterIPs);
  const families = strings(spec.ipFamilies);
  const errs: FieldError[] = [];
  if (policy === 'SingleStack') {
    const why = 'must be \'RequireDualStack\' or \'PreferDualStack\' when multiple';
    if (ips.length === 2) errs.push(invalid('spec.ipFamilyPolicy', policy, `${why} cluster IPs are specified`));
    if (families.length === 2) errs.push(invalid('spec.ipFamilyPolicy', policy, `${why} IP families are specified`));
  }
  for (let i = 0; i < ips.length && ips[i] !== 'None'; i++) {
    if (i < families.length) continue;
    const fam = familyOf(ips[i]!);
    if (fam !== 'IPv4') errs.push(invalidShown(`spec.clusterIPs[${i}]`, goSlice('string', ips), `${fam} is not configured on this cluster`));
    else families.push(fam);
  }
  if (errs.length > 0) return errs;
  // headless without selector: any families, and both when not SingleStack, even on a single-stack cluster
  if (spec.clusterIP === 'None' && !hasSelector(spec)) {
    if (families.length === 0) families.push('IPv4');
    if (families.length < 2 && policy !== 'SingleStack') families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
    spec.ipFamilies = families;
    return [];
  }
  if (policy === 'RequireDualStack') errs.push(invalidShown('spec.ipFamilyPolicy', goStringPtr(policy), 'this cluster is not configured for dual-stack services'));
  families.forEach((f, i) => {
    if (f !== 'IPv4') errs.push(invalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
  });
  if (errs.length > 0) return errs;
  spec.ipFamilies = families.length > 0 ? families : ['IPv4'];
  return [];
}
