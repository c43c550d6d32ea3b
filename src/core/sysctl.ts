// Sysctl names as kube 1.32 reads them, shared by the API's pod validation
// (src/registry/kinds/pod-sysctls.ts) and the node agent's sysctl admission
// (src/nodeagent/sysctl-allowlist.ts): the name format, its normal form, and
// which kernel namespace a sysctl lives in (k8s.io/component-helpers
// node/util/sysctl).

/** one segment of a name: lower-case letters and digits, `-` and `_` inside */
const SEGMENT = '[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
/** a pattern's last segment may be or end in `*` (policy validation's sysctlPatternSegmentFmt) */
const PATTERN_SEGMENT = '([a-z0-9][-_a-z0-9]*)?[a-z0-9*]';

/** kube's SysctlContainSlashFmt: segments separated by `.` or `/` */
export const SYSCTL_FMT = `(${SEGMENT}[\\./])*${SEGMENT}`;
/** kube's SysctlContainSlashPatternFmt: a name whose last segment may carry `*` */
export const SYSCTL_PATTERN_FMT = `(${SEGMENT}[\\./])*${PATTERN_SEGMENT}`;
export const SYSCTL_MAX_LENGTH = 253;

/** the regexp kube compiles from SYSCTL_FMT; its source is what kube's message prints */
export const SYSCTL_REGEXP_SOURCE = `^${SYSCTL_FMT}$`;
const NAME_RE = new RegExp(SYSCTL_REGEXP_SOURCE);
const PATTERN_RE = new RegExp(`^${SYSCTL_PATTERN_FMT}$`);

/** IsValidSysctlName: at most 253 characters in kube's format */
export const isValidSysctlName = (name: string): boolean => name.length <= SYSCTL_MAX_LENGTH && NAME_RE.test(name);

/** IsValidSysctlPattern (the kubelet's allowedUnsafeSysctls entries) */
export const isValidSysctlPattern = (name: string): boolean => name.length <= SYSCTL_MAX_LENGTH && PATTERN_RE.test(name);

/**
 * NormalizeName: a name whose first separator is `/` (`kernel/shm_rmid_forced`,
 * `net/ipv4/conf/eno2.100/rp_filter`) in the dotted form, `.` and `/` swapped
 * (sysctl.d(5)); a dotted name is left as it is
 */
export function normalizeSysctlName(name: string): string {
  const first = name.search(/[./]/);
  if (first === -1 || name[first] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

/** the kernel namespace a sysctl belongs to (kube names them `IPC` and `Net`); undefined when not known to be namespaced */
export type SysctlNamespace = 'IPC' | 'Net';

const IPC_NAMES = new Set([
  'kernel.sem', 'kernel.shmall', 'kernel.shmmax', 'kernel.shmmni', 'kernel.shm_rmid_forced', 'kernel.shm',
  'kernel.msgmax', 'kernel.msgmnb', 'kernel.msgmni', 'kernel.msg',
]);
const PREFIX_NAMESPACES: [string, SysctlNamespace][] = [['net.', 'Net'], ['fs.mqueue.', 'IPC']];

function namespaceOf(name: string): SysctlNamespace | undefined {
  if (IPC_NAMES.has(name)) return 'IPC';
  return PREFIX_NAMESPACES.find(([p]) => name.startsWith(p))?.[1];
}

/**
 * GetNamespace: the normal form of a name or pattern cut before its first `*`,
 * whether it was a pattern, and its namespace. `kernel.shm*` is `kernel.shm`
 * (IPC), `net.ipv4.*` is `net.ipv4.` (Net), `kernel.msgmax` IPC, `vm.swappiness` none.
 */
export function sysctlNamespace(nameOrPattern: string): { namespace?: SysctlNamespace; prefix: string; prefixed: boolean } {
  let prefix = normalizeSysctlName(nameOrPattern);
  const star = prefix.indexOf('*');
  const prefixed = star !== -1;
  if (prefixed) prefix = prefix.slice(0, star);
  return { namespace: namespaceOf(prefix), prefix, prefixed };
}
