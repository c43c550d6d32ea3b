// `--node-ip` as kubelet's ParseNodeIPArgument (component-helpers node/util):
// comma-separated; an entry that is no IP is logged ("Could not parse node IP.
// Ignoring") and skipped; more than two, or two of one family, stop the
// start. No valid entry: the address is auto-detected.

import { isIP } from 'node:net';

export class NodeIPError extends Error {}

/** ParseIPSloppy: IPv4 octets with leading zeros are read as decimal */
function parseSloppy(s: string): string | undefined {
  if (isIP(s)) return s;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets.join('.') : undefined;
}

/** the node IPs of `--node-ip` (none: auto-detect) */
export function parseNodeIPArgument(arg: string | undefined, log: (m: string) => void): string[] {
  const ips: string[] = [];
  for (const raw of (arg ?? '').split(',')) {
    const s = raw.trim();
    if (!s) continue;
    const ip = parseSloppy(s);
    if (ip === undefined) log(`Could not parse node IP. Ignoring IP="${raw}"`);
    else ips.push(ip);
  }
  if (ips.length > 2 || (ips.length === 2 && isIP(ips[0]!) === isIP(ips[1]!))) {
    throw new NodeIPError(`--node-ip ${JSON.stringify(arg)}: must contain either a single IP or a dual-stack pair of IPs`);
  }
  return ips;
}
