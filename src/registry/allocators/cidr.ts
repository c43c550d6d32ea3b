// IPv4 ranges for service IP allocation (`--service-cluster-ip-range`).

export interface Ipv4Range {
  /** the text as given, e.g. `10.96.0.0/12` */
  cidr: string;
  /** network address as an unsigned 32-bit number */
  base: number;
  /** addresses in the range, network and broadcast included */
  size: number;
}

export function parseIpv4(text: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

export function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Throws an Error naming the flag when `cidr` is not an IPv4 CIDR with room for at least one service. */
export function parseIpv4Cidr(cidr: string, flag = '--service-cluster-ip-range'): Ipv4Range {
  const [addr, bitsText] = cidr.split('/');
  const ip = addr === undefined ? undefined : parseIpv4(addr);
  const bits = Number(bitsText);
  if (ip === undefined || bitsText === undefined || !Number.isInteger(bits) || bits < 8 || bits > 30) {
    throw new Error(`${flag}: "${cidr}" is not an IPv4 CIDR between /8 and /30 (e.g. 10.96.0.0/12)`);
  }
  const size = 2 ** (32 - bits);
  const base = Math.floor(ip / size) * size;
  return { cidr, base, size };
}

/** the usable addresses: network and broadcast excluded */
export function usable(r: Ipv4Range, ip: number): boolean {
  return ip > r.base && ip < r.base + r.size - 1;
}
