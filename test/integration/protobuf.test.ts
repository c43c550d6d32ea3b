// Protobuf over real HTTPS (spec 000 §2.7, §4.3): enveloped request bodies,
// negotiated responses under both media type names, Status errors, lists,
// DELETE with protobuf DeleteOptions, and 415 for kinds without field numbers.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtobufCatalog } from '../../src/registry/protobuf-catalog.js';
import { decodeEnvelope, encodeEnvelope, ENVELOPE_PREFIX } from '../../src/machinery/protobuf/envelope.js';
import { encodeProtobufObject } from '../../src/machinery/protobuf/codec.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let catalog: ProtobufCatalog;
const K8S_PB = 'application/vnd.kubernetes.protobuf';
const ORCH_PB = 'application/vnd.orch.protobuf';

beforeAll(async () => {
  t = await startTestServer();
  catalog = new ProtobufCatalog(t.server.registry);
});
afterAll(async () => {
  await t?.stop();
});

function body(apiVersion: string, kind: string, obj: Record<string, unknown>): Buffer {
  const def = t.server.registry.lookupKind('', 'v1', kind)!;
  return Buffer.from(encodeEnvelope({ apiVersion, kind }, encodeProtobufObject(obj, def, t.server.registry.defs)));
}

function decode(raw: Buffer): Record<string, unknown> {
  const env = decodeEnvelope(raw);
  const def = t.server.registry.lookupKind('', 'v1', env.typeMeta.kind.replace(/List$/, ''));
  return catalog.decodeBody(raw, def ?? t.server.registry.lookupKind('', 'v1', 'ConfigMap')!, env.typeMeta.kind);
}

describe('protobuf over HTTPS', () => {
  it('creates from a protobuf body and answers in protobuf with the requested media type name', async () => {
    const r = await t.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: body('v1', 'ConfigMap', { metadata: { name: 'pb1' }, data: { a: 'b' }, binaryData: { bin: Buffer.from([1, 2, 3]).toString('base64') } }),
      headers: { 'Content-Type': K8S_PB, Accept: `${K8S_PB}, application/json` },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.headers['content-type']).toBe(K8S_PB);
    expect([...r.raw.subarray(0, 4)]).toEqual([...ENVELOPE_PREFIX]);
    const created = decode(r.raw);
    expect(created).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pb1', namespace: 'default' }, data: { a: 'b' }, binaryData: { bin: 'AQID' } });
    expect(typeof (created.metadata as { uid?: unknown }).uid).toBe('string');

    const j = await t.request('GET', '/api/v1/namespaces/default/configmaps/pb1');
    expect(j.headers['content-type']).toContain('application/json');
    expect(j.json().binaryData).toEqual({ bin: 'AQID' });

    const g = await t.request('GET', '/api/v1/namespaces/default/configmaps/pb1', { headers: { Accept: ORCH_PB } });
    expect(g.status).toBe(200);
    expect(g.headers['content-type']).toBe(ORCH_PB);
    expect(decode(g.raw)).toMatchObject({ metadata: { name: 'pb1' }, data: { a: 'b' } });
  });

  it('lists and Status errors in protobuf', async () => {
    const l = await t.request('GET', '/api/v1/namespaces/default/configmaps', { headers: { Accept: K8S_PB } });
    expect(l.status).toBe(200);
    const list = decode(l.raw) as { kind: string; items: { metadata: { name: string } }[]; metadata: { resourceVersion: string } };
    expect(list.kind).toBe('ConfigMapList');
    expect(list.items.map((i) => i.metadata.name)).toContain('pb1');
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);

    const nf = await t.request('GET', '/api/v1/namespaces/default/configmaps/missing', { headers: { Accept: `${K8S_PB}, application/json` } });
    expect(nf.status).toBe(404);
    expect(nf.headers['content-type']).toBe(K8S_PB);
    const env = decodeEnvelope(nf.raw);
    expect(env.typeMeta).toEqual({ apiVersion: 'v1', kind: 'Status' });
    const status = catalog.decodeBody(nf.raw, t.server.registry.lookupKind('', 'v1', 'ConfigMap')!, 'Status');
    expect(status).toMatchObject({ status: 'Failure', reason: 'NotFound', code: 404, details: { name: 'missing', kind: 'configmaps' } });
  });

  it('updates with protobuf and deletes with protobuf DeleteOptions (preconditions honoured)', async () => {
    const cur = (await t.request('GET', '/api/v1/namespaces/default/configmaps/pb1')).json<{ metadata: { resourceVersion: string; uid: string } }>();
    const u = await t.request('PUT', '/api/v1/namespaces/default/configmaps/pb1', {
      body: body('v1', 'ConfigMap', { metadata: { name: 'pb1', resourceVersion: cur.metadata.resourceVersion }, data: { a: 'c' } }),
      headers: { 'Content-Type': ORCH_PB },
    });
    expect(u.status, u.text).toBe(200);
    expect(u.json().data).toEqual({ a: 'c' });

    const n = new SchemaNames(t.server.registry.apiDomain);
    const delDef = t.server.registry.defs[n.meta('DeleteOptions')];
    const opts = (uid: string): Buffer => Buffer.from(encodeEnvelope({ apiVersion: 'v1', kind: 'DeleteOptions' }, encodeProtobufObject({ preconditions: { uid } }, delDef!, t.server.registry.defs)));
    const wrong = await t.request('DELETE', '/api/v1/namespaces/default/configmaps/pb1', { body: opts('not-the-uid'), headers: { 'Content-Type': K8S_PB } });
    expect(wrong.status, wrong.text).toBe(409);
    const ok = await t.request('DELETE', '/api/v1/namespaces/default/configmaps/pb1', { body: opts(cur.metadata.uid), headers: { 'Content-Type': K8S_PB } });
    expect(ok.status, ok.text).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps/pb1')).status).toBe(404);
  });

  // a Go client writes every non-pointer field, so an unset omitempty number or bool arrives as 0/false:
  // kube reads it as unset (its defaults apply, its JSON leaves it out)
  it('Go zeros of omitempty fields read as unset: probe timings defaulted, hostPort, unschedulable and count absent', async () => {
    const probe = { tcpSocket: { port: 80 }, initialDelaySeconds: 0, timeoutSeconds: 0, periodSeconds: 0, successThreshold: 0, failureThreshold: 0 };
    const pod = await t.request('POST', '/api/v1/namespaces/default/pods', {
      body: body('v1', 'Pod', { metadata: { name: 'pb-zeros' }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80, hostPort: 0 }], readinessProbe: probe }] } }),
      headers: { 'Content-Type': K8S_PB },
    });
    expect(pod.status, pod.text).toBe(201);
    const c = pod.json<{ spec: { containers: Record<string, unknown>[] } }>().spec.containers[0]!;
    expect(c.readinessProbe).toEqual({ tcpSocket: { port: 80 }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
    expect(c.ports).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
    const node = await t.request('POST', '/api/v1/nodes', { body: body('v1', 'Node', { metadata: { name: 'pb-zeros' }, spec: { unschedulable: false } }), headers: { 'Content-Type': K8S_PB } });
    expect(node.status, node.text).toBe(201);
    expect(node.json<{ spec: Record<string, unknown> }>().spec).not.toHaveProperty('unschedulable');
    const event = await t.request('POST', '/api/v1/namespaces/default/events', {
      body: body('v1', 'Event', { metadata: { name: 'pb-zeros.1' }, involvedObject: { kind: 'Pod', name: 'pb-zeros', namespace: 'default' }, reason: 'R', message: 'm', count: 0 }),
      headers: { 'Content-Type': K8S_PB },
    });
    expect(event.status, event.text).toBe(201);
    expect(event.json()).not.toHaveProperty('count');
  });

  it('rejects malformed bodies with 400 and a kind mismatch with 400', async () => {
    const noPrefix = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: Buffer.from('{"a":1}'), headers: { 'Content-Type': K8S_PB } });
    expect(noPrefix.status).toBe(400);
    expect(noPrefix.json().message).toContain('prefix');
    const truncated = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x30, 0x0a]), headers: { 'Content-Type': K8S_PB } });
    expect(truncated.status).toBe(400);
    expect(truncated.json().message).toContain('truncated');
    const mismatch = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: body('v1', 'Secret', { metadata: { name: 'x' } }), headers: { 'Content-Type': K8S_PB } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json().message).toContain('does not match the expected kind');
  });

  it('415 for a kind without field numbers; its responses fall through to JSON (406 when only protobuf is acceptable)', async () => {
    const def: ResourceDefinition = {
      group: 'example.com',
      version: 'v1',
      kind: 'Gadget',
      resource: 'gadgets',
      singular: 'gadget',
      scope: 'Namespaced',
      customResource: true,
      schema: { type: 'object', properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object', 'x-orch-preserve-unknown-fields': true }, spec: { type: 'object', 'x-orch-preserve-unknown-fields': true } } },
      strategy: {},
    };
    t.server.registry.add(def);
    const path = '/apis/example.com/v1/namespaces/default/gadgets';
    const pb = Buffer.from(encodeEnvelope({ apiVersion: 'example.com/v1', kind: 'Gadget' }, Uint8Array.of(0x0a, 0x03, 0x0a, 0x01, 0x67)));
    const r = await t.request('POST', path, { body: pb, headers: { 'Content-Type': K8S_PB } });
    expect(r.status).toBe(415);
    expect(r.json().reason).toBe('UnsupportedMediaType');
    const c = await t.request('POST', path, { body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' } }, headers: { Accept: `${K8S_PB}, application/json` } });
    expect(c.status, c.text).toBe(201);
    expect(c.headers['content-type']).toContain('application/json');
    const only = await t.request('GET', `${path}/g`, { headers: { Accept: K8S_PB } });
    expect(only.status).toBe(406);
  });
});
