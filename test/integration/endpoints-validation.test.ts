// kube 1.32's validation of Endpoints and EndpointSlices on a started server
// (pkg/apis/core/validation ValidateEndpoints…, pkg/apis/discovery/validation
// ValidateEndpointSlice…): refused writes answer 422 Invalid with kube's paths,
// types and messages and nothing is stored; what kube accepts is stored.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await t?.stop();
});

type Obj = Record<string, any>;
const EPS = '/api/v1/namespaces/default/endpoints';
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';

async function send(method: string, path: string, body: object, want: number): Promise<Obj> {
  const r = await t.request(method, path, { body });
  expect(r.status, r.text).toBe(want);
  return r.json();
}

describe('Endpoints', () => {
  it('refuses a link-local address with kube\'s Status, and stores nothing', async () => {
    const s = await send('POST', EPS, { metadata: { name: 'll' }, subsets: [{ addresses: [{ ip: '169.254.10.1' }], ports: [{ port: 80 }] }] }, 422);
    expect(s).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422,
      message: 'Endpoints "ll" is invalid: subsets[0].addresses[0].ip: Invalid value: "169.254.10.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      details: { name: 'll', kind: 'Endpoints', causes: [{ reason: 'FieldValueInvalid', field: 'subsets[0].addresses[0].ip', message: 'Invalid value: "169.254.10.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)' }] },
    });
    expect((await t.request('GET', `${EPS}/ll`)).status).toBe(404);
  });

  it('stores a loopback address (orch has no pod network: a Service fronts what runs on a member on loopback)', async () => {
    await send('POST', EPS, { metadata: { name: 'lo' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: 80 }] }] }, 201);
    expect((await t.request('GET', `${EPS}/lo`)).json<{ subsets: unknown }>().subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }]);
  });

  it('words an absent ip and port as kube does (Go\'s zero values), not as missing fields', async () => {
    const s = await send('POST', EPS, { metadata: { name: 'zero' }, subsets: [{ addresses: [{}], ports: [{ name: 'a' }, { name: 'b', port: 8080, protocol: 'ICMP' }] }] }, 422);
    expect(s.details.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'subsets[0].addresses[0].ip', message: 'Invalid value: "": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)' },
      { reason: 'FieldValueInvalid', field: 'subsets[0].addresses[0].ip', message: 'Invalid value: "": must be a valid IP address' },
      { reason: 'FieldValueInvalid', field: 'subsets[0].ports[0].port', message: 'Invalid value: 0: must be between 1 and 65535, inclusive' },
      { reason: 'FieldValueNotSupported', field: 'subsets[0].ports[1].protocol', message: 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"' },
    ]);
    const empty = await send('POST', EPS, { metadata: { name: 'empty' }, subsets: [{ ports: [{ port: 80 }] }] }, 422);
    expect(empty.message).toBe('Endpoints "empty" is invalid: subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`');
  });

  it('stores a valid object, an empty protocol defaulted to TCP, and checks an update the same way', async () => {
    const e = await send('POST', EPS, { metadata: { name: 'ok' }, subsets: [{ addresses: [{ ip: '10.0.0.1', nodeName: 'n1' }], ports: [{ port: 80, protocol: '' }] }] }, 201);
    expect(e.subsets).toEqual([{ addresses: [{ ip: '10.0.0.1', nodeName: 'n1' }], ports: [{ port: 80, protocol: 'TCP' }] }]);
    const bad = await send('PUT', `${EPS}/ok`, { ...e, subsets: [{ addresses: [{ ip: '169.254.169.254' }] }] }, 422);
    expect(bad.message).toBe('Endpoints "ok" is invalid: subsets[0].addresses[0].ip: Invalid value: "169.254.169.254": may not be in the link-local range (169.254.0.0/16, fe80::/10)');
    await send('PUT', `${EPS}/ok`, { ...e, subsets: [{ notReadyAddresses: [{ ip: 'fd00::5' }] }] }, 200);
  });
});

describe('EndpointSlice', () => {
  it('refuses an address of another family and words the address type as kube', async () => {
    const s = await send('POST', SLICES, { metadata: { name: 'v6in4' }, addressType: 'IPv4', endpoints: [{ addresses: ['fd00::1'] }], ports: [{ name: 'a' }, { name: 'a' }] }, 422);
    expect(s.message).toBe('EndpointSlice.discovery.k8s.io "v6in4" is invalid: [endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address, ports[1].name: Duplicate value: "a"]');
    const empty = await send('POST', SLICES, { metadata: { name: 'notype' }, addressType: '', endpoints: [{}] }, 422);
    expect(empty.details.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'addressType', message: 'Required value' },
      { reason: 'FieldValueRequired', field: 'endpoints[0].addresses', message: 'Required value: must contain at least 1 address' },
    ]);
    expect((await send('POST', SLICES, { metadata: { name: 'ip' }, addressType: 'IP' }, 422)).message)
      .toBe('EndpointSlice.discovery.k8s.io "ip" is invalid: addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"');
  });

  it('accepts a slice without endpoints (a placeholder) and an FQDN one; keeps the address type', async () => {
    const placeholder = await send('POST', SLICES, { metadata: { name: 'ph' }, addressType: 'IPv4' }, 201);
    expect(placeholder.addressType).toBe('IPv4');
    await send('POST', SLICES, { metadata: { name: 'fqdn' }, addressType: 'FQDN', endpoints: [{ addresses: ['db.example.com.'] }] }, 201);
    const moved = await send('PUT', `${SLICES}/ph`, { ...placeholder, addressType: 'IPv6', endpoints: [{ addresses: ['fd00::1'] }] }, 422);
    expect(moved.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'addressType', message: 'Invalid value: "IPv6": field is immutable' }]);
  });

  it('keeps the fields the strategy checks required in the served OpenAPI, with addressType\'s enum', async () => {
    const doc = (await t.request('GET', '/openapi/v3/apis/discovery.k8s.io/v1')).json<Obj>();
    const schemas = doc.components.schemas as Obj;
    expect(schemas['io.k8s.api.discovery.v1.EndpointSlice'].required).toEqual(['addressType', 'endpoints']);
    expect(schemas['io.k8s.api.discovery.v1.EndpointSlice'].properties.addressType.enum).toEqual(['FQDN', 'IPv4', 'IPv6']);
    expect(schemas['io.k8s.api.discovery.v1.Endpoint'].required).toEqual(['addresses']);
  });

  it('drops deprecatedTopology on create, as kube\'s v1 strategy', async () => {
    const s = await send('POST', SLICES, { metadata: { name: 'topo' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.9'], deprecatedTopology: { 'topology.kubernetes.io/zone': 'a' } }] }, 201);
    expect(s.endpoints).toEqual([{ addresses: ['10.0.0.9'], conditions: {} }]);
  });
});
