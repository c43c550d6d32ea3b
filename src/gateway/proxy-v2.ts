// PROXY protocol v2 header codec and the connection ids the TLS front writes
// into it (haproxy proxy-protocol.txt §2.2). The front names every TLS
// connection to uWS by a random IPv6 "source address" in fd00::/8 (120 random
// bits); the gateway reads it back with `getProxiedRemoteAddressAsText()`.
// docs/tls.md "The PROXY-v2 connection-id trick" says why this is safe.
import { randomFillSync } from 'node:crypto';

const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** version 2, command PROXY */
const PROXY_V2_VERSION_COMMAND = 0x21;
/** AF_INET6, SOCK_STREAM */
const PROXY_V2_TCP6 = 0x21;
const IPV6_ADDRESS_BLOCK_LENGTH = 36;
export const PROXY_V2_TCP6_HEADER_LENGTH = 16 + IPV6_ADDRESS_BLOCK_LENGTH;
const SRC_OFFSET = 16;
const DST_OFFSET = 32;
const SRC_PORT_OFFSET = 48;
const DST_PORT_OFFSET = 50;
/** first byte of every connection id: the IPv6 unique-local range fd00::/8 */
const ID_PREFIX = 0xfd;
/** destination address written into every header (fd00::1); uWS ignores it */
export const PROXY_DESTINATION = Buffer.from('fd000000000000000000000000000001', 'hex');

/** A PROXY v2 TCP-over-IPv6 header. */
export function encodeProxyV2Header(src: Uint8Array, dst: Uint8Array, srcPort: number, dstPort: number): Buffer {
  if (src.length !== 16 || dst.length !== 16) throw new Error('PROXY v2 IPv6 addresses are 16 bytes');
  const h = Buffer.allocUnsafe(PROXY_V2_TCP6_HEADER_LENGTH);
  PROXY_V2_SIGNATURE.copy(h, 0);
  h[12] = PROXY_V2_VERSION_COMMAND;
  h[13] = PROXY_V2_TCP6;
  h.writeUInt16BE(IPV6_ADDRESS_BLOCK_LENGTH, 14);
  h.set(src, SRC_OFFSET);
  h.set(dst, DST_OFFSET);
  h.writeUInt16BE(srcPort & 0xffff, SRC_PORT_OFFSET);
  h.writeUInt16BE(dstPort & 0xffff, DST_PORT_OFFSET);
  return h;
}

/** A fresh, unguessable connection id: fd followed by 15 random bytes (120 bits). */
export function newConnectionId(): Buffer {
  const id = Buffer.allocUnsafe(16);
  id[0] = ID_PREFIX;
  randomFillSync(id, 1, 15);
  return id;
}

/**
 * The text uWS returns from `getProxiedRemoteAddressAsText()` for a connection
 * id: 8 groups of 4 lowercase hex digits (e.g. `fd00:0000:...:0001:e240`).
 * This is the canonical form the front's map is keyed by.
 */
export function proxiedAddressFor(id: Uint8Array): string {
  if (id.length !== 16) throw new Error('connection id must be 16 bytes');
  const hex = Buffer.from(id.buffer, id.byteOffset, 16).toString('hex');
  let out = hex.slice(0, 4);
  for (let i = 4; i < 32; i += 4) out += ':' + hex.slice(i, i + 4);
  return out;
}

const CANONICAL_RE = /^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$/;

/**
 * Parse any textual IPv6 address (full or `::`-compressed, any case) into the
 * 16-byte connection id, or undefined when it is not an IPv6 address.
 * Embedded IPv4 (`::ffff:1.2.3.4`) is not a connection id and is rejected.
 */
export function parseProxiedAddress(text: string): Buffer | undefined {
  const t = text.toLowerCase();
  if (CANONICAL_RE.test(t)) return Buffer.from(t.replace(/:/g, ''), 'hex');
  const halves = t.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): string[] | undefined => {
    if (part === '') return [];
    const groups = part.split(':');
    return groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups : undefined;
  };
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  return Buffer.from(groups.map((g) => g.padStart(4, '0')).join(''), 'hex');
}

/** the canonical map key for any textual form of a connection id, or undefined */
export function canonicalKey(text: string): string | undefined {
  if (text.length === 39 && CANONICAL_RE.test(text)) return text;
  const id = parseProxiedAddress(text);
  return id ? proxiedAddressFor(id) : undefined;
}
