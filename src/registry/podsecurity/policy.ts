// The namespace's Pod Security policy: the `pod-security.kubernetes.io/*`
// labels read into a level and a version per mode (enforce, audit, warn),
// with kube's parse rules and field errors. An unparsable enforce label
// enforces restricted:latest; an unparsable audit or warn level falls back
// to privileged (kube fails open for those two).

import { invalid } from '../kinds/field-errors.js';
import type { FieldError } from '../types.js';

export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export type Level = 'privileged' | 'baseline' | 'restricted';
export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];
export type Mode = 'enforce' | 'audit' | 'warn';
const MODES: readonly Mode[] = ['enforce', 'audit', 'warn'];

/** a policy version: `latest` or v1.<minor> */
export type Version = { latest: true } | { latest: false; minor: number };
export const LATEST: Version = { latest: true };

export interface LevelVersion {
  level: Level;
  version: Version;
}

export type Policy = Record<Mode, LevelVersion>;

export function versionString(v: Version): string {
  return v.latest ? 'latest' : `v1.${v.minor}`;
}

/** as kube prints it: `restricted:latest` */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && versionString(a.version) === versionString(b.version);
}

/** -1, 0 or 1 as `a` is less strict, as strict or stricter than `b` */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

/** kube's default AdmissionConfiguration: privileged:latest for every mode */
export const DEFAULT_POLICY: Policy = {
  enforce: { level: 'privileged', version: LATEST },
  audit: { level: 'privileged', version: LATEST },
  warn: { level: 'privileged', version: LATEST },
};

const VERSION_RE = /^v1\.(0|[1-9][0-9]*)$/;

function parseVersion(s: string): Version | undefined {
  if (s === 'latest') return LATEST;
  const m = VERSION_RE.exec(s);
  return m ? { latest: false, minor: Number(m[1]) } : undefined;
}

/** the namespace's policy from its labels, with the defaults for absent labels; errors name the bad labels */
export function policyFromLabels(labels: Record<string, string> | undefined, defaults: Policy = DEFAULT_POLICY): { policy: Policy; errors: FieldError[] } {
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: FieldError[] = [];
  if (!labels) return { policy, errors };
  const bad = (label: string, value: string, why: string) => errors.push(invalid(`metadata.labels[${label}]`, value, why));
  for (const mode of MODES) {
    const levelLabel = `${LABEL_PREFIX}${mode}`;
    const level = labels[levelLabel];
    if (level !== undefined) {
      if ((LEVELS as readonly string[]).includes(level)) {
        policy[mode].level = level as Level;
      } else {
        bad(levelLabel, level, `must be one of ${LEVELS.join(', ')}`);
        policy[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
      }
    }
    const versionLabel = `${levelLabel}-version`;
    const version = labels[versionLabel];
    if (version !== undefined) {
      const v = parseVersion(version);
      if (!v) bad(versionLabel, version, 'must be "latest" or "v1.x"');
      policy[mode].version = v ?? LATEST;
    }
  }
  return { policy, errors };
}
