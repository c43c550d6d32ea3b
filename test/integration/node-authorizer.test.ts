// Node authorizer and NodeRestriction against a started server (spec
// 001_bdb487117be0ea8a.txt §5.15), with a real node client certificate
// issued by the server's CA (CN=system:node:<name>, O=system:nodes).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let n1: { certPem: string; keyPem: string };
let n2: { certPem: string; keyPem: string };

beforeAll(async () => {
  t = await startTestServer({ authorization: { mode: 'Node' } });
  const pki = await loadPki(join(t.dataDir, 'pki'));
  n1 = await issueClientCertificate(pki, { commonName: 'system:node:n1', organizations: ['system:nodes'] });
  n2 = await issueClientCertificate(pki, { commonName: 'system:node:n2', organizations: ['system:nodes'] });
});
afterAll(async () => {
  await t?.stop();
});

const podOn = (name: string, node: string, extra: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, annotations },
  spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], ...extra },
});

/** the graph follows the store's applied feed; poll until it has caught up (no timing assertion) */
async function statusUntil(path: string, cert: { certPem: string; keyPem: string }, want: number): Promise<number> {
  let last = 0;
  for (let i = 0; i < 50; i++) {
    last = (await t.request('GET', path, { cert })).status;
    if (last === want) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  return last;
}

describe('Node authorizer', () => {
  it('a node reads a secret only while a pod bound to it references it', async () => {
    const secret = '/api/v1/namespaces/default/secrets/s1';
    expect((await t.request('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' } } })).status).toBe(201);
    const before = await t.request('GET', secret, { cert: n1 });
    expect(before.status).toBe(403);
    expect(before.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden' });
    const pod = podOn('p1', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's1' } }] });
    expect((await t.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
    expect(await statusUntil(secret, n1, 200)).toBe(200);
    expect((await t.request('GET', secret, { cert: n2 })).status).toBe(403);
    expect((await t.request('GET', '/api/v1/namespaces/default/pods/p1', { cert: n1 })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/pods/p1', { cert: n2 })).status).toBe(403);
    // list/watch narrowed by field selectors (AuthorizeNodeWithSelectors)
    expect((await t.request('GET', '/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%3Ds1', { cert: n1 })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/secrets', { cert: n1 })).status).toBe(403);
    const mine = await t.request('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1', { cert: n1 });
    expect(mine.status).toBe(200);
    expect(mine.json<{ items: Array<{ metadata: { name: string } }> }>().items.map((p) => p.metadata.name)).toEqual(['p1']);
    expect((await t.request('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn2', { cert: n1 })).status).toBe(403);
    expect((await t.request('GET', '/api/v1/pods', { cert: n1 })).status).toBe(403);
    expect((await t.request('DELETE', '/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0')).status).toBe(200);
    expect(await statusUntil(secret, n1, 403)).toBe(403);
  });

  it('a node updates its own node status but not another node', async () => {
    const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
    expect((await t.request('POST', '/api/v1/nodes', { body: node('n1'), cert: n1 })).status).toBe(201);
    expect((await t.request('POST', '/api/v1/nodes', { body: node('n2') })).status).toBe(201);
    const patch = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    const headers = { 'Content-Type': 'application/merge-patch+json' };
    expect((await t.request('PATCH', '/api/v1/nodes/n1/status', { body: patch, headers, cert: n1 })).status).toBe(200);
    expect((await t.request('PATCH', '/api/v1/nodes/n2/status', { body: patch, headers, cert: n1 })).status).toBe(403);
    expect((await t.request('GET', '/api/v1/nodes/n1', { cert: n1 })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/nodes/n2', { cert: n1 })).status).toBe(403);
    expect((await t.request('GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dn1', { cert: n1 })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/nodes', { cert: n1 })).status).toBe(403);
    // a node may not register as another node (NodeRestriction)
    const other = await t.request('POST', '/api/v1/nodes', { body: node('n3'), cert: n1 });
    expect(other.status).toBe(403);
    expect(other.json<{ message: string }>().message).toBe('nodes "n3" is forbidden: node "n1" is not allowed to modify node "n3"');
  });
});

describe('NodeRestriction', () => {
  it('denies a non-mirror pod and a pod bound elsewhere; allows a mirror pod bound to itself', async () => {
    const plain = await t.request('POST', '/api/v1/namespaces/default/pods', { body: podOn('plain', 'n1'), cert: n1 });
    expect(plain.status).toBe(403);
    expect(plain.json<{ message: string }>().message).toBe('pods "plain" is forbidden: pod does not have "orch.io/config.mirror" annotation, node "n1" can only create mirror pods');
    const mirror = { 'orch.io/config.mirror': 'hash' };
    const elsewhere = await t.request('POST', '/api/v1/namespaces/default/pods', { body: podOn('m2', 'n2', {}, mirror), cert: n1 });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json<{ message: string }>().message).toContain('can only create pods with spec.nodeName set to itself');
    expect((await t.request('POST', '/api/v1/namespaces/default/pods', { body: podOn('m1', 'n1', {}, mirror), cert: n1 })).status).toBe(201);
    expect((await t.request('GET', '/api/v1/namespaces/default/pods/plain')).status).toBe(404);
  });

  it('denies protected labels on its own node', async () => {
    const headers = { 'Content-Type': 'application/merge-patch+json' };
    const body = { metadata: { labels: { 'node-restriction.orch.io/pool': 'a' } } };
    const r = await t.request('PATCH', '/api/v1/nodes/n1', { body, headers, cert: n1 });
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toBe('nodes "n1" is forbidden: node "n1" is not allowed to modify labels: node-restriction.orch.io/pool');
    const ok = await t.request('PATCH', '/api/v1/nodes/n1', { body: { metadata: { labels: { 'orch.io/hostname': 'n1', team: 'x' } } }, headers, cert: n1 });
    expect(ok.status).toBe(200);
    // the admin is not a node: NodeRestriction ignores it
    expect((await t.request('PATCH', '/api/v1/nodes/n1', { body, headers })).status).toBe(200);
  });
});
