// String formats of OpenAPI schemas (the formats Kubernetes' CRD validation
// knows, spec 000 §4.8). A format the table does not name is not checked, as
// in Kubernetes; `byte`, `date-time` and `quantity` are checked by validate.ts
// itself because built-in kinds use them with their own messages.

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*\.?$/;
const MAC = /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Go time.ParseDuration syntax */
const DURATION = /^[-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))*$|^0$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

function isIPv4(v: string): boolean {
  const parts = v.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255 && (p === '0' || !p.startsWith('0')));
}

function isIPv6(v: string): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(v) || v.split('::').length > 2) return false;
  let s = v;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    if (!isIPv4(s.slice(lastColon + 1))) return false;
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const [head, tail] = s.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined ? [] : tail === '' ? [] : tail.split(':');
  if (![...h, ...t].every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  return tail === undefined ? h.length === 8 : h.length + t.length < 8;
}

function isCidr(v: string): boolean {
  const slash = v.indexOf('/');
  if (slash < 0) return false;
  const ip = v.slice(0, slash);
  const bits = v.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  if (isIPv4(ip)) return Number(bits) <= 32;
  return isIPv6(ip) && Number(bits) <= 128;
}

function isUri(v: string): boolean {
  try {
    new URL(v);
    return true;
  } catch {
    return false;
  }
}

const CHECKS: Record<string, (v: string) => boolean> = {
  uuid: (v) => UUID.test(v),
  uuid3: (v) => UUID.test(v),
  uuid4: (v) => UUID.test(v),
  uuid5: (v) => UUID.test(v),
  email: (v) => EMAIL.test(v),
  hostname: (v) => HOSTNAME.test(v),
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: isCidr,
  mac: (v) => MAC.test(v),
  uri: isUri,
  date: (v) => DATE.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)),
  duration: (v) => DURATION.test(v),
  hexcolor: (v) => HEXCOLOR.test(v),
};

/** false when `v` is not of the named format; true for formats not checked */
export function matchesFormat(format: string, v: string): boolean {
  const check = CHECKS[format];
  return check === undefined || check(v);
}
