// IP addresses as kube 1.32 checks them in Services and Endpoints: Go's
// net.ParseIP with k8s.io/utils/net's sloppy IPv4 (leading zeros), the
// messages of apimachinery's IsValidIP and core validation's ValidateNonSpecialIP.

import { isIPv6Literal, isSloppyIPv4 } from '../../machinery/schema/formats.js';
import type { FieldError } from '../types.js';
import { invalid } from './field-errors.js';

/** the address as 4 bytes (IPv4, IPv4-mapped IPv6 too, as Go's To4) or 16 bytes; undefined when not an IP */
export function parseIP(v: string): number[] | undefined {
  if (!v.includes(':')) return isSloppyIPv4(v) ? v.split('.').map(Number) : undefined;
  if (!isIPv6Literal(v)) return undefined;
  let text = v;
  if (text.includes('.')) {
    // a trailing dotted IPv4 is the last two groups
    const at = text.lastIndexOf(':');
    const q = text.slice(at + 1).split('.').map(Number);
    text = `${text.slice(0, at + 1)}${(q[0]! * 256 + q[1]!).toString(16)}:${(q[2]! * 256 + q[3]!).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = groups(head);
  const t = rest === undefined ? [] : groups(rest);
  const words = rest === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const bytes = words.flatMap((w) => [w >> 8, w & 255]);
  return bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255 ? bytes.slice(12) : bytes;
}

export const isIPv6 = (v: string): boolean => parseIP(v)?.length === 16;

/** apimachinery's IsValidIP */
export function ipErrors(field: string, v: string): FieldError[] {
  return parseIP(v) ? [] : [invalid(field, v, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
}

/**
 * kube's ValidateNonSpecialIP: no unspecified, loopback, link-local or link-local multicast address.
 * `allowLoopback`: orch's Endpoints and EndpointSlices (docs/services.md "Loopback endpoints").
 */
export function nonSpecialIPErrors(field: string, v: string, allowLoopback = false): FieldError[] {
  const b = parseIP(v);
  if (!b) return [invalid(field, v, 'must be a valid IP address')];
  const errs: FieldError[] = [];
  const v4 = b.length === 4;
  if (b.every((x) => x === 0)) errs.push(invalid(field, v, `may not be unspecified (${v})`));
  const loopback = v4 ? b[0] === 127 : b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  if (loopback && !allowLoopback) errs.push(invalid(field, v, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  if (v4 ? b[0] === 169 && b[1] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) errs.push(invalid(field, v, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (v4 ? b[0] === 224 && b[1] === 0 && b[2] === 0 : b[0] === 0xff && (b[1]! & 0x0f) === 0x02) {
    errs.push(invalid(field, v, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  }
  return errs;
}
