// The EndpointSlice mirroring controller's grouping (kube's
// endpointslicemirroring reconciler): an Endpoints object's subsets as
// slices' contents, by address type and port set.

import { describe, expect, it } from 'vitest';
import { MAX_ENDPOINTS_PER_SUBSET, mirroredGroups } from '../../src/controllers/endpoints/endpointslice-mirroring.js';

describe('mirroredGroups', () => {
  it('groups addresses by family and port set; not-ready addresses are ready: false; hostname, node and target come along', () => {
    const groups = [...mirroredGroups({
      metadata: { name: 'ep', namespace: 'ns' },
      subsets: [
        { ports: [{ name: 'http', port: 80 }], addresses: [{ ip: '10.0.0.1', hostname: 'a', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'p', namespace: 'ns' } }], notReadyAddresses: [{ ip: 'fd00::2' }] },
        { ports: [{ port: 80, name: 'http', protocol: 'TCP' }], addresses: [{ ip: '10.0.0.3' }] },
        { ports: [{ port: 53, protocol: 'UDP' }], addresses: [{ ip: '10.0.0.4' }] },
      ],
    } as never).values()];
    expect(groups.map((g) => [g.family, g.ports, g.endpoints])).toEqual([
      ['IPv4', [{ name: 'http', port: 80, protocol: 'TCP' }], [
        { addresses: ['10.0.0.1'], conditions: { ready: true }, hostname: 'a', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'p', namespace: 'ns' } },
        { addresses: ['10.0.0.3'], conditions: { ready: true } },
      ]],
      ['IPv6', [{ name: 'http', port: 80, protocol: 'TCP' }], [{ addresses: ['fd00::2'], conditions: { ready: false } }]],
      ['IPv4', [{ name: '', port: 53, protocol: 'UDP' }], [{ addresses: ['10.0.0.4'], conditions: { ready: true } }]],
    ]);
  });

  it(`mirrors at most ${MAX_ENDPOINTS_PER_SUBSET} addresses of a subset`, () => {
    const addresses = Array.from({ length: MAX_ENDPOINTS_PER_SUBSET + 5 }, (_, i) => ({ ip: `10.1.${i >> 8}.${i & 255}` }));
    const [g] = [...mirroredGroups({ metadata: { name: 'ep' }, subsets: [{ ports: [{ port: 80 }], addresses }] } as never).values()];
    expect(g?.endpoints).toHaveLength(MAX_ENDPOINTS_PER_SUBSET);
  });
});
