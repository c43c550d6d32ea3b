// Which checks a level and version run, in kube's order, and their results
// aggregated into kube's messages. Checks are ordered by their kube ID,
// baseline ones first; at the restricted level a restricted check replaces
// the baseline checks it overrides (capabilities, hostPath, seccomp). A check
// applies from its first policy version; a version newer than any check's is
// evaluated as the newest.

import * as b from './checks-baseline.js';
import * as r from './checks-restricted.js';
import type { CheckFn, PodMeta, PodSpec, Violation } from './pod-view.js';
import type { LevelVersion } from './policy.js';

interface Check {
  id: string;
  /** [first minor version, the check from then on], oldest first */
  versions: [number, CheckFn][];
  /** restricted checks only: the baseline checks they replace */
  overrides?: string[];
}

const BASELINE: Check[] = [
  { id: 'appArmorProfile', versions: [[0, b.appArmorProfile]] },
  { id: 'capabilities_baseline', versions: [[0, b.capabilitiesBaseline]] },
  { id: 'hostNamespaces', versions: [[0, b.hostNamespaces]] },
  { id: 'hostPathVolumes', versions: [[0, b.hostPathVolumes]] },
  { id: 'hostPorts', versions: [[0, b.hostPorts]] },
  { id: 'privileged', versions: [[0, b.privileged]] },
  { id: 'procMount', versions: [[0, b.procMount]] },
  { id: 'seLinuxOptions', versions: [[0, b.seLinuxOptions]] },
  { id: 'seccompProfile_baseline', versions: [[0, b.seccompProfileBaselineAnnotations], [19, b.seccompProfileBaseline]] },
  { id: 'sysctls', versions: [[0, b.sysctlsFor(0)], [27, b.sysctlsFor(27)], [29, b.sysctlsFor(29)], [32, b.sysctlsFor(32)]] },
  { id: 'windowsHostProcess', versions: [[0, b.windowsHostProcess]] },
];

const RESTRICTED: Check[] = [
  { id: 'allowPrivilegeEscalation', versions: [[8, r.allowPrivilegeEscalation], [25, r.linuxOnly(r.allowPrivilegeEscalation)]] },
  { id: 'capabilities_restricted', versions: [[22, r.capabilitiesRestricted], [25, r.linuxOnly(r.capabilitiesRestricted)]], overrides: ['capabilities_baseline'] },
  { id: 'restrictedVolumes', versions: [[0, r.restrictedVolumes]], overrides: ['hostPathVolumes'] },
  { id: 'runAsNonRoot', versions: [[0, r.runAsNonRoot]] },
  { id: 'runAsUser', versions: [[23, r.runAsUser]] },
  { id: 'seccompProfile_restricted', versions: [[19, r.seccompProfileRestricted], [25, r.linuxOnly(r.seccompProfileRestricted)]], overrides: ['seccompProfile_baseline'] },
];

/** the check's version for policy minor `v`, if it applies yet */
function at(c: Check, v: number): CheckFn | undefined {
  let fn: CheckFn | undefined;
  for (const [since, f] of c.versions) if (since <= v) fn = f;
  return fn;
}

/** the checks of a level at a version, in the order their results are reported */
export function checksFor(lv: LevelVersion): CheckFn[] {
  if (lv.level === 'privileged') return [];
  const v = lv.version.latest ? Number.POSITIVE_INFINITY : lv.version.minor;
  const restricted = lv.level === 'restricted' ? RESTRICTED.filter((c) => at(c, v)) : [];
  const overridden = new Set(restricted.flatMap((c) => c.overrides ?? []));
  return [...BASELINE.filter((c) => !overridden.has(c.id)), ...restricted].map((c) => at(c, v)).filter((f): f is CheckFn => f !== undefined);
}

/** the violations of a pod (or template) under a level and version; empty = allowed */
export function evaluatePod(lv: LevelVersion, meta: PodMeta, spec: PodSpec): Violation[] {
  return checksFor(lv).flatMap((check) => check(meta, spec) ?? []);
}

/** kube's ForbiddenDetail: `reason (detail), reason, …` */
export function forbiddenDetail(violations: Violation[]): string {
  return violations.map((x) => (x.detail ? `${x.reason} (${x.detail})` : x.reason)).join(', ');
}

/** kube's ForbiddenReason: the reasons alone */
export function forbiddenReason(violations: Violation[]): string {
  return violations.map((x) => x.reason).join(', ');
}
