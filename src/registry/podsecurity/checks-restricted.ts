// The restricted level's checks of the Pod Security Standards (kube 1.32),
// run after the baseline checks they do not replace. Windows pods
// (spec.os.name=windows) pass the Linux-only ones from policy v1.25 on.

import { seccompExplicit } from './checks-baseline.js';
import { type CheckFn, allContainers, containerList, isWindows, joinQuote, sortedSet } from './pod-view.js';

/** from v1.25 a Windows pod passes `check` (kube: Linux-only fields) */
export function linuxOnly(check: CheckFn): CheckFn {
  return (meta, spec) => (isWindows(spec) ? undefined : check(meta, spec));
}

export const allowPrivilegeEscalation: CheckFn = (_meta, spec) => {
  const bad = allContainers(spec).filter((c) => c.securityContext?.allowPrivilegeEscalation !== false).map((c) => c.name ?? '');
  return bad.length > 0 ? { reason: 'allowPrivilegeEscalation != false', detail: `${containerList(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
};

export const capabilitiesRestricted: CheckFn = (_meta, spec) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const caps = new Set<string>();
  for (const c of allContainers(spec)) {
    const capabilities = c.securityContext?.capabilities;
    if (capabilities == null) {
      missingDrop.push(c.name ?? '');
      continue;
    }
    if (!(capabilities.drop ?? []).includes('ALL')) missingDrop.push(c.name ?? '');
    const added = (capabilities.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
    for (const cap of added) caps.add(cap);
    if (added.length > 0) adding.push(c.name ?? '');
  }
  const details: string[] = [];
  if (missingDrop.length > 0) details.push(`${containerList(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length > 0) details.push(`${containerList(adding)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`);
  return details.length > 0 ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
};

const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];

export const restrictedVolumes: CheckFn = (_meta, spec) => {
  const bad = (spec.volumes ?? []).filter((v) => !ALLOWED_VOLUME_SOURCES.some((k) => v[k] != null)).map((v) => String(v.name ?? ''));
  if (bad.length === 0) return undefined;
  // kube prints the sorted names as a Go %q slice: ["a" "b"]
  return { reason: 'restricted volume types', detail: `volumes [${sortedSet(bad).map((n) => JSON.stringify(n)).join(' ')}] have restricted types` };
};

export const runAsNonRoot: CheckFn = (_meta, spec) => {
  const podValue = spec.securityContext?.runAsNonRoot;
  const badSetters: string[] = podValue === false ? ['pod'] : [];
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of allContainers(spec)) {
    const v = c.securityContext?.runAsNonRoot;
    if (v != null) {
      if (!v) explicit.push(c.name ?? '');
    } else if (podValue !== true) {
      implicit.push(c.name ?? '');
    }
  }
  if (explicit.length > 0) badSetters.push(containerList(explicit));
  if (badSetters.length > 0) return { reason: 'runAsNonRoot != true', detail: `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length > 0) return { reason: 'runAsNonRoot != true', detail: `pod or ${containerList(implicit)} must set securityContext.runAsNonRoot=true` };
  return undefined;
};

export const runAsUser: CheckFn = (_meta, spec) => {
  const badSetters: string[] = spec.securityContext?.runAsUser === 0 ? ['pod'] : [];
  const bad = allContainers(spec).filter((c) => c.securityContext?.runAsUser === 0).map((c) => c.name ?? '');
  if (bad.length > 0) badSetters.push(containerList(bad));
  return badSetters.length > 0 ? { reason: 'runAsUser=0', detail: `${badSetters.join(' and ')} must not set runAsUser=0` } : undefined;
};

export const seccompProfileRestricted: CheckFn = (_meta, spec) => {
  const e = seccompExplicit(spec);
  const badSetters: string[] = e.podBad ? ['pod'] : [];
  if (e.containers.length > 0) badSetters.push(containerList(e.containers));
  if (badSetters.length > 0) return { reason: 'seccompProfile', detail: `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(e.values)}` };
  const podSet = spec.securityContext?.seccompProfile != null;
  // containers without a profile of their own, not covered by a valid pod-level one
  const implicit = podSet ? [] : allContainers(spec).filter((c) => c.securityContext?.seccompProfile == null).map((c) => c.name ?? '');
  return implicit.length > 0 ? { reason: 'seccompProfile', detail: `pod or ${containerList(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` } : undefined;
};
