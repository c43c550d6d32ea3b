// The host address a test puts in Endpoints for a server of its own: Endpoints refuse
// loopback addresses (kube's ValidateNonSpecialIP), so such servers listen on every
// interface and are reached through the host's first global unicast address.

import { advertiseAddress } from '../../src/server/advertise-address.js';

export function endpointHostIP(): string {
  const ip = advertiseAddress('127.0.0.1');
  if (!ip) throw new Error('this test needs a non-loopback address on the host: Endpoints cannot list a loopback one');
  return ip;
}
