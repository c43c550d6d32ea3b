// The address the `kubernetes` Service's Endpoints and EndpointSlice list: kube's
// --advertise-address default (ServerRunOptions.DefaultAdvertiseAddress through
// utilnet.ResolveBindAddress) is the bind address unless it is unspecified or
// loopback, else a global unicast address of the host (ChooseHostInterface, IPv4
// first), since Endpoints refuse special addresses (kube's ValidateNonSpecialIP).
// orch has no --advertise-address flag; without such an address nothing is listed.

import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import { nonSpecialIPErrors, parseIP } from '../registry/kinds/ip-address.js';

const usable = (ip: string): boolean => parseIP(ip) !== undefined && nonSpecialIPErrors('', ip).length === 0;

/** the address to advertise for a server bound to `bind`; undefined when the host has none fit for Endpoints */
export function advertiseAddress(bind: string, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): string | undefined {
  if (usable(bind)) return bind;
  const external = Object.values(interfaces).flatMap((list) => list ?? []).filter((a) => !a.internal && usable(a.address));
  return (external.find((a) => a.family === 'IPv4') ?? external.find((a) => a.family === 'IPv6'))?.address;
}
