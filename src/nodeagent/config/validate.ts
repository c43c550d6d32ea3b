// Start-up checks of the configuration that kubelet makes before anything
// starts (spec 002 §2.4; kubelet's ValidateKubeletConfiguration and
// ParseResourceList in cmd/kubelet/app/server.go): registerWithTaints,
// systemReserved/kubeReserved and port. Every error is reported, joined, with
// kubelet's wording and the field named.

import { parseQuantity } from '../../core/quantity.js';
import { SUBDOMAIN_RE } from '../static-pod-validation.js';

const NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const NAME_RE = new RegExp(`^${NAME}$`);
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const RESERVABLE = ['cpu', 'memory', 'ephemeral-storage', 'pid'];

/** IsQualifiedName: `[prefix/]name`, the prefix a DNS-1123 subdomain */
function qualifiedNameError(key: string): string | undefined {
  const parts = key.split('/');
  const name = parts.at(-1)!;
  if (parts.length > 2) return 'a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', with an optional DNS subdomain prefix and \'/\'';
  if (parts.length === 2 && (!parts[0] || parts[0].length > 253 || !SUBDOMAIN_RE.test(parts[0]))) return 'prefix part must be a lowercase RFC 1123 subdomain';
  if (!name) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!NAME_RE.test(name)) return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  return undefined;
}

/** kubelet's CheckTaintValidation, and no timeAdded */
function taintError(t: Record<string, unknown>): string | undefined {
  const key = typeof t.key === 'string' ? t.key : '';
  const keyErr = qualifiedNameError(key);
  if (keyErr) return `invalid taint key: ${keyErr}`;
  const value = t.value ?? '';
  if (typeof value !== 'string' || value.length > 63 || (value !== '' && !NAME_RE.test(value))) return 'invalid taint value: a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\' (at most 63)';
  if (t.effect !== undefined && t.effect !== '' && !EFFECTS.includes(t.effect as string)) return `invalid taint effect: ${String(t.effect)}, unsupported taint effect`;
  if (t.timeAdded !== undefined && t.timeAdded !== null) return 'taint.TimeAdded is not nil';
  return undefined;
}

/** kubelet's ParseResourceList of a reservation */
function reservedErrors(field: string, m: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(m)) {
    if (!RESERVABLE.includes(k)) out.push(`field "${field}": cannot reserve "${k}" resource (${RESERVABLE.join(', ')})`);
    else if (parseQuantity(v) === undefined) out.push(`field "${field}.${k}": "${v}" is not a quantity`);
    else if (parseQuantity(v)! < 0) out.push(`field "${field}.${k}": resource quantity for "${k}" cannot be negative: ${v}`);
  }
  return out;
}

/** the start-up errors of the resolved configuration (empty: it may start) */
export function startupErrors(c: Record<string, unknown>): string[] {
  const out: string[] = [];
  (c.registerWithTaints as Record<string, unknown>[]).forEach((t, i) => {
    const e = taintError(t);
    if (e) out.push(`field "registerWithTaints[${i}]": invalid taint: ${JSON.stringify(t)}: ${e}`);
  });
  out.push(...reservedErrors('systemReserved', c.systemReserved as Record<string, string>));
  out.push(...reservedErrors('kubeReserved', c.kubeReserved as Record<string, string>));
  // 0 is orch's "pick a free port" (docs/nodeagent.md); kubelet's range otherwise
  const port = c.port as number;
  if (port !== 0 && (port < 1 || port > 65535)) out.push(`field "port": port (--port) ${port} must be between 1 and 65535, inclusive`);
  return out;
}
