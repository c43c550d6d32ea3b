// Seccomp profiles on the agent side (spec 002 §2.5, §7): the effective
// profile of a container (its own securityContext.seccompProfile, else the
// pod's), Localhost profiles loaded from `<root-dir>/seccomp` and checked
// against the OCI runtime-spec format before they are handed to the runtime.

import { readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { SecurityProfile } from './runtime/types.js';

export const SECCOMP_ACTIONS = [
  'SCMP_ACT_ERRNO',
  'SCMP_ACT_ALLOW',
  'SCMP_ACT_KILL_PROCESS',
  'SCMP_ACT_KILL_THREAD',
  'SCMP_ACT_KILL',
  'SCMP_ACT_TRAP',
  'SCMP_ACT_NOTIFY',
  'SECCOMP_RET_USER_NOTIF',
  'SCMP_ACT_TRACE',
  'SCMP_ACT_LOG',
] as const;
const NOTIFY = new Set(['SCMP_ACT_NOTIFY', 'SECCOMP_RET_USER_NOTIF']);
const ARG_OPS = new Set(['SCMP_CMP_NE', 'SCMP_CMP_LT', 'SCMP_CMP_LE', 'SCMP_CMP_EQ', 'SCMP_CMP_GE', 'SCMP_CMP_GT', 'SCMP_CMP_MASKED_EQ']);

export class SeccompError extends Error {}

interface ProfileField {
  type?: string;
  localhostProfile?: string;
}

/** container value overrides the pod value; an unset container value inherits the pod's */
export function effectiveProfile(pod: ProfileField | undefined, container: ProfileField | undefined): ProfileField | undefined {
  return container?.type ? container : pod?.type ? pod : undefined;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isUint = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** validate an OCI seccomp profile; returns the problem or undefined */
export function validateProfile(p: unknown): string | undefined {
  if (!isObj(p)) return 'the profile must be a JSON object';
  const known = new Set(['defaultAction', 'defaultErrnoRet', 'architectures', 'flags', 'listenerPath', 'listenerMetadata', 'syscalls']);
  for (const k of Object.keys(p)) if (!known.has(k)) return `unknown field "${k}"`;
  if (typeof p.defaultAction !== 'string' || !(SECCOMP_ACTIONS as readonly string[]).includes(p.defaultAction)) {
    return `defaultAction must be one of ${SECCOMP_ACTIONS.join(', ')}`;
  }
  if (NOTIFY.has(p.defaultAction)) return `defaultAction cannot be ${p.defaultAction}`;
  if (p.defaultErrnoRet !== undefined && !isUint(p.defaultErrnoRet)) return 'defaultErrnoRet must be a non-negative integer';
  if (p.architectures !== undefined && (!Array.isArray(p.architectures) || p.architectures.some((a) => typeof a !== 'string'))) return 'architectures must be a list of strings';
  if (p.syscalls === undefined) return undefined;
  if (!Array.isArray(p.syscalls)) return 'syscalls must be a list';
  for (const [i, s] of p.syscalls.entries()) {
    const at = `syscalls[${i}]`;
    if (!isObj(s)) return `${at} must be an object`;
    for (const k of Object.keys(s)) if (!['names', 'action', 'errnoRet', 'args', 'comment', 'includes', 'excludes'].includes(k)) return `${at}: unknown field "${k}"`;
    if (!Array.isArray(s.names) || s.names.length === 0 || s.names.some((n) => typeof n !== 'string' || n === '')) return `${at}.names must be a non-empty list of syscall names`;
    if (typeof s.action !== 'string' || !(SECCOMP_ACTIONS as readonly string[]).includes(s.action)) return `${at}.action must be one of ${SECCOMP_ACTIONS.join(', ')}`;
    if (s.errnoRet !== undefined && !isUint(s.errnoRet)) return `${at}.errnoRet must be a non-negative integer`;
    if (s.args !== undefined) {
      if (!Array.isArray(s.args)) return `${at}.args must be a list`;
      for (const [j, a] of s.args.entries()) {
        if (!isObj(a) || !isUint(a.index) || (a.index as number) > 5) return `${at}.args[${j}].index must be 0-5`;
        if (!isUint(a.value)) return `${at}.args[${j}].value must be a non-negative integer`;
        if (a.valueTwo !== undefined && !isUint(a.valueTwo)) return `${at}.args[${j}].valueTwo must be a non-negative integer`;
        if (typeof a.op !== 'string' || !ARG_OPS.has(a.op)) return `${at}.args[${j}].op must be one of ${[...ARG_OPS].join(', ')}`;
      }
    }
  }
  return undefined;
}

/** the runtime's SecurityProfile for an effective profile; throws SeccompError naming the file */
export async function resolveSeccomp(rootDir: string, profile: ProfileField | undefined): Promise<SecurityProfile | undefined> {
  if (!profile?.type) return undefined;
  if (profile.type === 'Unconfined') return { profileType: 'Unconfined' };
  if (profile.type === 'RuntimeDefault') return { profileType: 'RuntimeDefault' };
  if (profile.type !== 'Localhost') throw new SeccompError(`unknown seccomp profile type "${profile.type}"`);
  const base = resolve(rootDir, 'seccomp');
  const file = resolve(join(base, profile.localhostProfile ?? ''));
  if (!profile.localhostProfile || !file.startsWith(base + sep)) {
    throw new SeccompError(`seccomp profile "${profile.localhostProfile ?? ''}" must be a file under ${base}`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SeccompError(`failed to load seccomp profile ${file}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new SeccompError(`invalid seccomp profile ${file}: not JSON: ${(e as Error).message}`);
  }
  const problem = validateProfile(json);
  if (problem) throw new SeccompError(`invalid seccomp profile ${file}: ${problem}`);
  return { profileType: 'Localhost', localhostRef: file, profileJson: JSON.stringify(json) };
}
