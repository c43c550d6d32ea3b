// kube 1.32's checks of core/v1 Endpoints (ValidateEndpoints: validateEndpointSubsets,
// validateEndpointAddress, validateEndpointPort) and discovery/v1 EndpointSlice
// (ValidateEndpointSlice, ValidateEndpointSliceUpdate) with kube's paths and messages.

import { describe, expect, it } from 'vitest';
import { defaultEndpoints, dropDeprecatedTopology, validateEndpointSlice, validateEndpointSliceUpdate, validateEndpoints } from '../../src/registry/kinds/endpoints-validation.js';
import type { ApiObject, FieldError, JSONValue } from '../../src/registry/types.js';

const brief = (errs: FieldError[]): string[] => errs.map((e) => `${e.field}: ${e.message}`);
const ep = (subsets: JSONValue): ApiObject => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'e', namespace: 'd' }, subsets });
const slice = (s: Record<string, JSONValue>): ApiObject => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 's', namespace: 'd' }, addressType: 'IPv4', endpoints: [], ...s });
const PORT = { port: 80, protocol: 'TCP' };
const DNS_LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('Endpoints', () => {
  it('accepts addresses, not-ready addresses and a headless subset without ports', () => {
    expect(validateEndpoints(ep([{ addresses: [{ ip: '10.0.0.1', hostname: 'a', nodeName: 'n.1', targetRef: { kind: 'Pod', name: 'p' } }], notReadyAddresses: [{ ip: 'fd00::1' }], ports: [PORT] }]))).toEqual([]);
    expect(validateEndpoints(ep([{ addresses: [{ ip: '10.0.0.1' }] }]))).toEqual([]);
    expect(validateEndpoints(ep([]))).toEqual([]);
  });

  it('refuses special and malformed IPs, as IsValidIP then ValidateNonSpecialIP word them', () => {
    expect(brief(validateEndpoints(ep([{ addresses: [{ ip: '169.254.1.1' }], ports: [PORT] }])))).toEqual([
      'subsets[0].addresses[0].ip: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
    ]);
    expect(brief(validateEndpoints(ep([{ notReadyAddresses: [{ ip: '0.0.0.0' }, { ip: 'fe80::1' }, { ip: '224.0.0.1' }, { ip: '::' }] }])))).toEqual([
      'subsets[0].notReadyAddresses[0].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
      'subsets[0].notReadyAddresses[1].ip: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'subsets[0].notReadyAddresses[2].ip: Invalid value: "224.0.0.1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
      'subsets[0].notReadyAddresses[3].ip: Invalid value: "::": may not be unspecified (::)',
    ]);
  });

  it('accepts loopback addresses, where orch parts from kube (no pod network: what a Service fronts on a member is on loopback)', () => {
    expect(validateEndpoints(ep([{ addresses: [{ ip: '127.0.0.1' }], notReadyAddresses: [{ ip: '::1' }], ports: [PORT] }]))).toEqual([]);
    // an absent ip is Go's "": both checks speak, hostname and node in between
    expect(brief(validateEndpoints(ep([{ addresses: [{ hostname: 'A', nodeName: 'bad_node' }] }])))).toEqual([
      'subsets[0].addresses[0].ip: Invalid value: "": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      `subsets[0].addresses[0].hostname: Invalid value: "A": ${DNS_LABEL}`,
      expect.stringMatching(/^subsets\[0\]\.addresses\[0\]\.nodeName: Invalid value: "bad_node": a lowercase RFC 1123 subdomain must consist of/),
      'subsets[0].addresses[0].ip: Invalid value: "": must be a valid IP address',
    ]);
  });

  it('needs an address in every subset', () => {
    expect(brief(validateEndpoints(ep([{ ports: [PORT] }, { addresses: [], notReadyAddresses: [] }])))).toEqual([
      'subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`',
      'subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`',
    ]);
  });

  it('checks ports: a name when there are several, the number, the protocol, the appProtocol', () => {
    const addresses = [{ ip: '10.0.0.1' }];
    expect(brief(validateEndpoints(ep([{ addresses, ports: [{ port: 80, protocol: 'TCP' }, { name: 'Web', port: 0, protocol: 'ICMP', appProtocol: 'a/b/c' }] }])))).toEqual([
      'subsets[0].ports[0].name: Required value',
      `subsets[0].ports[1].name: Invalid value: "Web": ${DNS_LABEL}`,
      'subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'subsets[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      "subsets[0].ports[1].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]);
    // one port needs no name; names are not checked for uniqueness (kube's validateEndpointPort)
    expect(validateEndpoints(ep([{ addresses, ports: [{ port: 65535, protocol: 'SCTP' }] }]))).toEqual([]);
    expect(validateEndpoints(ep([{ addresses, ports: [{ name: 'a', port: 1, protocol: 'UDP' }, { name: 'a', port: 2, protocol: 'UDP' }] }]))).toEqual([]);
    expect(brief(validateEndpoints(ep([{ addresses, ports: [{ port: 65536, protocol: '' }] }])))).toEqual([
      'subsets[0].ports[0].port: Invalid value: 65536: must be between 1 and 65535, inclusive',
      'subsets[0].ports[0].protocol: Required value',
    ]);
  });

  it('defaults an empty protocol to TCP as SetDefaults_Endpoints', () => {
    const o = ep([{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: '' }, { port: 81, protocol: 'UDP' }] }]);
    defaultEndpoints(o);
    expect((o.subsets as { ports: { protocol: string }[] }[])[0]!.ports.map((p) => p.protocol)).toEqual(['TCP', 'UDP']);
  });
});

describe('EndpointSlice', () => {
  it('accepts what the controllers write, an empty or absent endpoint list', () => {
    expect(validateEndpointSlice(slice({
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true }, hostname: 'h', nodeName: 'n', zone: 'any zone', targetRef: { kind: 'Pod' }, hints: { forZones: [{ name: 'z1' }] } }],
      ports: [{ name: 'http', port: 80, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }, { name: '', protocol: 'UDP' }],
    }))).toEqual([]);
    expect(validateEndpointSlice(slice({}))).toEqual([]);
    const { endpoints: _e, ...noEndpoints } = slice({});
    expect(validateEndpointSlice(noEndpoints as ApiObject)).toEqual([]);
  });

  it('checks the address type', () => {
    expect(brief(validateEndpointSlice(slice({ addressType: '' })))).toEqual(['addressType: Required value']);
    expect(brief(validateEndpointSlice(slice({ addressType: 'IP' })))).toEqual(['addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"']);
    // an unknown type leaves the addresses unchecked
    expect(brief(validateEndpointSlice(slice({ addressType: 'IP', endpoints: [{ addresses: ['x'] }] })))).toHaveLength(1);
  });

  it('checks each address against the address type, then as ValidateNonSpecialIP', () => {
    const addrs = (addressType: string, addresses: string[]) => brief(validateEndpointSlice(slice({ addressType, endpoints: [{ addresses }] })));
    expect(addrs('IPv4', ['10.0.0.1', '::ffff:10.0.0.2'])).toEqual([]);
    expect(addrs('IPv4', ['127.0.0.5'])).toEqual([]);
    expect(addrs('IPv4', ['fd00::1', '169.254.0.5', 'nope'])).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address',
      'endpoints[0].addresses[1]: Invalid value: "169.254.0.5": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'endpoints[0].addresses[2]: Invalid value: "nope": must be a valid IPv4 address',
      'endpoints[0].addresses[2]: Invalid value: "nope": must be a valid IP address',
    ]);
    expect(addrs('IPv6', ['fd00::1'])).toEqual([]);
    expect(addrs('IPv6', ['10.0.0.1', 'fe80::2'])).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address',
      'endpoints[0].addresses[1]: Invalid value: "fe80::2": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
    ]);
  });

  it('checks FQDN addresses as IsFullyQualifiedDomainName', () => {
    const fqdn = (a: string) => brief(validateEndpointSlice(slice({ addressType: 'FQDN', endpoints: [{ addresses: [a] }] })));
    expect(fqdn('example.com')).toEqual([]);
    expect(fqdn('example.com.')).toEqual([]);
    expect(fqdn('localhost')).toEqual(['endpoints[0].addresses[0]: Invalid value: "localhost": should be a domain with at least two segments separated by dots']);
    expect(fqdn('')).toEqual(['endpoints[0].addresses[0]: Required value']);
    expect(fqdn('Example.com')[0]).toMatch(/^endpoints\[0\]\.addresses\[0\]: Invalid value: "Example\.com": a lowercase RFC 1123 subdomain must consist of/);
    expect(fqdn(`${'a'.repeat(64)}.com`)).toEqual([`endpoints[0].addresses[0]: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`]);
  });

  it('counts endpoints, addresses, zone hints and ports', () => {
    const one = { addresses: ['10.0.0.1'] };
    expect(brief(validateEndpointSlice(slice({ endpoints: new Array(1001).fill({ addresses: ['x'] }) })))).toEqual(['endpoints: Too many: 1001: must have at most 1000 items']);
    expect(validateEndpointSlice(slice({ endpoints: new Array(1000).fill(one) }))).toEqual([]);
    expect(brief(validateEndpointSlice(slice({ endpoints: [{ addresses: [] }, { addresses: new Array(101).fill('10.0.0.1') }] })))).toEqual([
      'endpoints[0].addresses: Required value: must contain at least 1 address',
      'endpoints[1].addresses: Too many: 101: must have at most 100 items',
    ]);
    const zones = (n: number) => ({ ...one, hints: { forZones: Array.from({ length: n }, (_, i) => ({ name: `z${i}` })) } });
    expect(brief(validateEndpointSlice(slice({ endpoints: [zones(9)] })))).toEqual(['endpoints[0].hints.forZones: Too many: 9: must have at most 8 items']);
    expect(validateEndpointSlice(slice({ endpoints: [zones(8)] }))).toEqual([]);
    expect(brief(validateEndpointSlice(slice({ endpoints: [{ ...one, hints: { forZones: [{ name: 'a' }, { name: 'a' }, { name: 'b c' }] } }] })))).toEqual([
      'endpoints[0].hints.forZones[1].name: Duplicate value: "a"',
      expect.stringMatching(/^endpoints\[0\]\.hints\.forZones\[2\]\.name: Invalid value: "b c": a valid label must be an empty string or consist of/),
    ]);
    const ports = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `p${i}`, port: i, protocol: 'TCP' }));
    expect(brief(validateEndpointSlice(slice({ ports: ports(20001) })))).toEqual(['ports: Too many: 20001: must have at most 20000 items']);
    expect(validateEndpointSlice(slice({ ports: ports(150) }))).toEqual([]);
  });

  it('checks hostname, node name and ports', () => {
    expect(brief(validateEndpointSlice(slice({
      endpoints: [{ addresses: ['10.0.0.1'], hostname: '', nodeName: 'Node' }],
      ports: [{ name: '', protocol: 'TCP' }, { name: '', protocol: 'ICMP' }, { name: 'Http', protocol: 'TCP', appProtocol: '' }],
    })))).toEqual([
      expect.stringMatching(/^endpoints\[0\]\.nodeName: Invalid value: "Node": a lowercase RFC 1123 subdomain/),
      `endpoints[0].hostname: Invalid value: "": ${DNS_LABEL}`,
      'ports[1].name: Duplicate value: ""',
      'ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      `ports[2].name: Invalid value: "Http": ${DNS_LABEL}`,
      expect.stringMatching(/^ports\[2\]\.appProtocol: Invalid value: "": name part must be non-empty/),
      expect.stringMatching(/^ports\[2\]\.appProtocol: Invalid value: "": name part must consist of/),
    ]);
  });

  it('keeps the address type on update, after the create checks', () => {
    expect(brief(validateEndpointSliceUpdate(slice({ addressType: 'IPv6', endpoints: [{ addresses: ['10.0.0.1'] }] }), slice({})))).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address',
      'addressType: Invalid value: "IPv6": field is immutable',
    ]);
    expect(validateEndpointSliceUpdate(slice({ endpoints: [{ addresses: ['10.0.0.2'] }] }), slice({}))).toEqual([]);
  });

  it('drops deprecatedTopology unless an update leaves the endpoints as they were (dropTopologyOnV1)', () => {
    const withTopology = () => slice({ endpoints: [{ addresses: ['10.0.0.1'], deprecatedTopology: { 'topology.kubernetes.io/zone': 'a' } }] });
    const created = withTopology();
    dropDeprecatedTopology(created);
    expect(created.endpoints).toEqual([{ addresses: ['10.0.0.1'] }]);
    const kept = withTopology();
    dropDeprecatedTopology(kept, withTopology());
    expect(kept.endpoints).toEqual(withTopology().endpoints);
    const changed = slice({ endpoints: [{ addresses: ['10.0.0.2'], deprecatedTopology: { a: 'b' } }] });
    dropDeprecatedTopology(changed, withTopology());
    expect(changed.endpoints).toEqual([{ addresses: ['10.0.0.2'] }]);
  });
});
