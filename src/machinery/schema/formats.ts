// String formats as kube 1.32 checks them for CRDs: the formats apiextensions
// keeps (apiserver/validation/formats.go supportedVersionedFormats, 1.0 set;
// others are stripped, so never checked), names normalized without dashes
// (`date-time` = `datetime`), each checked as kube-openapi's strfmt registry
// does (strfmt/default.go, date.go, time.go, duration.go). `byte` and
// `quantity` are checked by validate.ts itself (built-in kinds' messages).

import { compilePattern } from './regex.js';

/** kube-openapi strfmt patterns, compiled by the same RE2 engine as Go's */
const re = (p: string) => compilePattern(p);
const HOSTNAME = re(String.raw`^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$`);
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGBCOLOR = /^rgb\([ \t\n\f\r]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[ \t\n\f\r]*,[ \t\n\f\r]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[ \t\n\f\r]*,[ \t\n\f\r]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[ \t\n\f\r]*\)$/;
const SSN = /^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$/;
const CREDITCARD = /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$/;

/** net.ParseIP's IPv4, leading zeros tolerated (k8s.io/utils/net ParseIPSloppy) */
export function isSloppyIPv4(v: string): boolean {
  const parts = v.split('.');
  return parts.length === 4 && parts.every((p) => /^[0-9]+$/.test(p) && Number(p) <= 255);
}

/** net.ParseIP's IPv6 (with an optional trailing dotted IPv4, strict: no leading zeros) */
export function isIPv6Literal(v: string, sloppyV4 = false): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(v) || v.split('::').length > 2) return false;
  let s = v;
  const lastColon = s.lastIndexOf(':');
  if (lastColon < 0) return false;
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = s.slice(lastColon + 1);
    if (!(sloppyV4 ? isSloppyIPv4(v4) : isStrictIPv4(v4))) return false;
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const [head = '', tail] = s.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  if (![...h, ...t].every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  return tail === undefined ? h.length === 8 : h.length + t.length < 8;
}

function isStrictIPv4(v: string): boolean {
  const parts = v.split('.');
  return parts.length === 4 && parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255 && (p === '0' || !p.startsWith('0')));
}

/** strfmt isIPv4: ParseIPSloppy succeeds and the text has a dot (so `::ffff:1.2.3.4` too) */
const isIPv4 = (v: string) => isSloppyIPv4(v) || (v.includes('.') && isIPv6Literal(v, true));
/** govalidator.IsIPv6: net.ParseIP succeeds and the text has a colon */
const isIPv6 = (v: string) => v.includes(':') && isIPv6Literal(v);

/** strfmt isCIDR: ParseCIDRSloppy */
function isCidr(v: string): boolean {
  const slash = v.indexOf('/');
  if (slash < 0) return false;
  const ip = v.slice(0, slash);
  const bits = v.slice(slash + 1);
  if (!/^[0-9]+$/.test(bits)) return false;
  if (isSloppyIPv4(ip)) return Number(bits) <= 32;
  return isIPv6Literal(ip, true) && Number(bits) <= 128;
}

/** Go net.ParseMAC: 6, 8 or 20 bytes as `xx:xx…`, `xx-xx…` or `xxxx.xxxx…` */
function isMac(v: string): boolean {
  if (v.length < 14) return false;
  if (v[2] === ':' || v[2] === '-') {
    if ((v.length + 1) % 3 !== 0) return false;
    const n = (v.length + 1) / 3;
    if (n !== 6 && n !== 8 && n !== 20) return false;
    const sep = v[2];
    for (let i = 0; i < n; i++) {
      const x = i * 3;
      if (!/^[0-9A-Fa-f]{2}$/.test(v.slice(x, x + 2)) || (i < n - 1 && v[x + 2] !== sep)) return false;
    }
    return true;
  }
  if (v[4] === '.') {
    if ((v.length + 1) % 5 !== 0) return false;
    const n = (2 * (v.length + 1)) / 5;
    if (n !== 6 && n !== 8 && n !== 20) return false;
    for (let x = 0; x < v.length; x += 5) {
      if (!/^[0-9A-Fa-f]{4}$/.test(v.slice(x, x + 4)) || (x + 4 < v.length && v[x + 4] !== '.')) return false;
    }
    return true;
  }
  return false;
}

/** strfmt IsHostname: the pattern, at most 255 bytes, labels at most 63 bytes */
function isHostname(v: string): boolean {
  if (!HOSTNAME.test(v) || Buffer.byteLength(v) > 255) return false;
  return v.split('.').every((p) => Buffer.byteLength(p) <= 63);
}

/** govalidator IsISBN: spaces and dashes removed, then the check digit */
function isIsbn(v: string, version: 10 | 13): boolean {
  const s = v.replace(/[ \t\n\f\r-]+/g, '');
  if (version === 10) {
    if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(s)) return false;
    let sum = 0;
    for (let i = 0; i < 9; i++) sum += (i + 1) * (s.charCodeAt(i) - 48);
    sum += 10 * (s[9] === 'X' ? 10 : s.charCodeAt(9) - 48);
    return sum % 11 === 0;
  }
  if (!/^[0-9]{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * (s.charCodeAt(i) - 48);
  return s.charCodeAt(12) - 48 === (10 - (sum % 10)) % 10;
}

/** govalidator IsCreditCard: non-digits removed, the issuers' pattern, the Luhn sum */
function isCreditCard(v: string): boolean {
  const s = v.replace(/[^0-9]+/g, '');
  if (!CREDITCARD.test(s)) return false;
  let sum = 0;
  let double = false;
  for (let i = s.length - 1; i >= 0; i--) {
    let d = s.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** strfmt IsDate: Go time.Parse("2006-01-02"), so real calendar days only */
export function isDate(v: string): boolean {
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(v)) return false;
  const y = Number(v.slice(0, 4));
  const m = Number(v.slice(5, 7));
  const d = Number(v.slice(8, 10));
  if (m < 1 || m > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= (m === 2 && !leap ? 28 : DAYS[m - 1]!);
}

/** strfmt time.go DateTimePattern (`.` is any rune but newline, as in Go) */
const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})([^\n][0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u;

/**
 * strfmt IsDateTime: lower-cased and split at `t` (so `t` and `z` may be lower
 * case; a space is no separator), a real date, then the time pattern with
 * hour ≤ 23, minute and second ≤ 59.
 */
export function isDateTime(v: string): boolean {
  if (v.length < 4) return false;
  const s = v.toLowerCase().split('t');
  if (s.length < 2 || !isDate(s[0]!)) return false;
  const m = TIME.exec(s[1]!);
  return m !== null && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/** Go time.ParseDuration (units ns us µs μs ms s m h, signs, fractions, overflow) */
function isGoDuration(v: string): boolean {
  let s = v;
  if (s === '') return false;
  if (s[0] === '-' || s[0] === '+') s = s.slice(1);
  if (s === '0') return true;
  if (s === '') return false;
  const UNITS: Record<string, bigint> = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n };
  const MAX = 1n << 63n;
  let total = 0n;
  const part = /^([0-9]*)(\.([0-9]*))?([^0-9.]*)/;
  while (s !== '') {
    const m = part.exec(s)!;
    const [all, int = '', dot, frac = '', unit = ''] = m;
    if (int === '' && frac === '') return false;
    if (unit === '') return false;
    const mult = UNITS[unit];
    if (mult === undefined) return false;
    if (int.length > 19 || BigInt(int || '0') > MAX) return false;
    let n = BigInt(int || '0') * mult;
    if (dot !== undefined && frac !== '') n += BigInt(Math.floor((Number(`0.${frac}`)) * Number(mult)));
    total += n;
    if (total > MAX) return false;
    s = s.slice(all.length);
  }
  return v[0] === '-' || total < MAX;
}

const SCALA_UNITS: [string[], boolean][] = [
  [['ns', 'nano'], true], [['us', 'µs', 'micro'], true], [['ms', 'milli'], true], [['s', 'sec'], true],
  [['m', 'min'], true], [['h', 'hr', 'hour'], true], [['d', 'day'], true], [['w', 'wk', 'week'], true],
];
const SCALA_SHAPE = /^[ \t\n\f\r]*(?:[0-9]+[ \t\n\f\r]*[A-Za-zµ]+[ \t\n\f\r]*)+$/;
const SCALA_PART = /([0-9]+)[ \t\n\f\r]*([A-Za-zµ]+)/g;
const INT64_MAX = 9223372036854775807n;

/**
 * strfmt IsDuration: Go's time.ParseDuration, else the Scala-style form
 * (`1d`, `3 weeks`, `1 h`): integers with units, at least one unit known (the
 * last spelling of each unit also as a prefix: `hours`, `days`, `seconds`).
 */
export function isDuration(v: string): boolean {
  if (isGoDuration(v)) return true;
  if (!SCALA_SHAPE.test(v)) return false;
  let ok = false;
  for (const m of v.matchAll(SCALA_PART)) {
    if (BigInt(m[1]!) > INT64_MAX) return false; // strconv.Atoi fails
    const unit = m[2]!.toLowerCase();
    for (const [variants] of SCALA_UNITS) {
      const last = variants.length - 1;
      if (variants.some((x, i) => (i === last && unit.startsWith(x)) || x === unit)) ok = true;
    }
  }
  return ok;
}

/** net/url.ParseRequestURI succeeds (strfmt `uri`: an absolute URI or an absolute path) */
export function isRequestUri(v: string): boolean {
  if (v === '' || /[\x00-\x1f\x7f]/.test(v)) return false;
  if (v === '*') return true;
  let rest = v;
  let scheme = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ':') {
      if (i === 0) return false; // missing protocol scheme
      scheme = v.slice(0, i);
      rest = v.slice(i + 1);
    }
    break;
  }
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) rest = rest.slice(0, -1);
  else if (rest.includes('?')) rest = rest.slice(0, rest.indexOf('?'));
  if (!rest.startsWith('/')) return scheme !== ''; // rootless: opaque with a scheme, else invalid for a request
  if (scheme !== '' && rest.startsWith('//')) {
    let authority = rest.slice(2);
    const slash = authority.indexOf('/');
    rest = slash >= 0 ? authority.slice(slash) : '';
    if (slash >= 0) authority = authority.slice(0, slash);
    if (!validAuthority(authority)) return false;
  }
  return validEscapes(rest);
}

/** `%` must start a two-digit hex escape (url.unescape) */
const validEscapes = (s: string) => !/%(?![0-9A-Fa-f]{2})/.test(s);

/** url.parseAuthority: userinfo characters, then the host and an optional numeric port */
function validAuthority(a: string): boolean {
  const at = a.lastIndexOf('@');
  let host = a;
  if (at >= 0) {
    const user = a.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(user) || !validEscapes(user)) return false;
    host = a.slice(at + 1);
  }
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) return false;
    const port = host.slice(close + 1);
    if (port !== '' && !/^:[0-9]*$/.test(port)) return false;
    return true;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^:[0-9]*$/.test(host.slice(colon))) return false;
  // url.shouldEscape in host mode: these ASCII characters are not allowed
  if (/[^A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"%\x80-\uffff]/.test(host)) return false;
  return validEscapes(host);
}

const CHECKS = new Map<string, (v: string) => boolean>(Object.entries({
  bsonobjectid: (v) => /^[0-9a-fA-F]{24}$/.test(v),
  uri: isRequestUri,
  email: (v) => EMAIL.test(v),
  hostname: isHostname,
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: isCidr,
  mac: isMac,
  uuid: (v) => UUID.test(v),
  uuid3: (v) => UUID3.test(v),
  uuid4: (v) => UUID4.test(v),
  uuid5: (v) => UUID5.test(v),
  isbn: (v) => isIsbn(v, 10) || isIsbn(v, 13),
  isbn10: (v) => isIsbn(v, 10),
  isbn13: (v) => isIsbn(v, 13),
  creditcard: isCreditCard,
  ssn: (v) => SSN.test(v),
  hexcolor: (v) => HEXCOLOR.test(v),
  rgbcolor: (v) => RGBCOLOR.test(v),
  password: () => true,
  date: isDate,
  datetime: isDateTime,
  duration: isDuration,
}));

/** false when `v` is not of the named format; true for formats kube does not check */
export function matchesFormat(format: string, v: string): boolean {
  const check = CHECKS.get(format) ?? CHECKS.get(format.replaceAll('-', ''));
  return check === undefined || check(v);
}
