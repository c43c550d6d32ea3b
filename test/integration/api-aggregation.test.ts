// API aggregation against a real aggregated API server in the test process
// (test/helpers/wardle-server.ts, kube's sample-apiserver's wardle.example.com),
// registered as kube's e2e registers one: a Service and Endpoints leading to
// it and an APIService naming the Service with its caBundle.

import { X509Certificate, createHash } from 'node:crypto';
import { request } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ensurePki } from '../../src/server/pki.js';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl, runKubectlInput, startKubectl } from '../helpers/kubectl.js';
import { kubeconfigFor, userCert } from '../helpers/identities.js';
import { WARDLE_GROUP, WARDLE_OPENAPI_V3, WARDLE_VERSION, type WardleServer, startWardleServer } from '../helpers/wardle-server.js';

type Obj = Record<string, any>;

const AS = `/apis/apiregistration.orch.io/v1/apiservices`;
const NAME = `${WARDLE_VERSION}.${WARDLE_GROUP}`;
const FLUNDERS = `/apis/${WARDLE_GROUP}/${WARDLE_VERSION}/namespaces/default/flunders`;

let t: TestServer;
let wardle: WardleServer;
let dir: string;

async function call(method: string, path: string, body?: object, headers?: Record<string, string>): Promise<Obj> {
  const r = await t.request(method, path, body ? { body, headers } : {});
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.json<Obj>();
}

const available = async () => (await t.request('GET', `${AS}/${NAME}`)).json<Obj>().status?.conditions?.find((c: Obj) => c.type === 'Available');

/** kube's e2e registration: a namespace, a Service and Endpoints leading to the server, the APIService naming the Service */
async function registerWardle(s: TestServer, w: WardleServer): Promise<void> {
  const post = async (path: string, body: object) => {
    const r = await s.request('POST', path, { body });
    if (r.status >= 300) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  };
  await post('/api/v1/namespaces', { metadata: { name: 'wardle' } });
  await post('/api/v1/namespaces/wardle/services', { metadata: { name: 'api' }, spec: { ports: [{ port: 443, targetPort: 8443 }] } });
  await post('/api/v1/namespaces/wardle/endpoints', { metadata: { name: 'api' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: w.port }] }] });
  await post(AS, {
    apiVersion: 'apiregistration.orch.io/v1',
    kind: 'APIService',
    metadata: { name: NAME },
    spec: { group: WARDLE_GROUP, version: WARDLE_VERSION, service: { namespace: 'wardle', name: 'api', port: 443 }, caBundle: w.caBundle, groupPriorityMinimum: 2000, versionPriority: 200 },
  });
  const cond = async () => (await s.request('GET', `${AS}/${NAME}`)).json<Obj>().status?.conditions?.find((c: Obj) => c.type === 'Available');
  await eventually(async () => (await cond())?.status === 'True', 'the APIService to become Available', 5000);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-aggr-'));
  [t, wardle] = await Promise.all([startTestServer(), startWardleServer(dir)]);
  await registerWardle(t, wardle);
});

afterAll(async () => {
  await t?.stop();
  await wardle?.close();
  await rm(dir, { recursive: true, force: true });
});

const header = (seen: WardleServer['seen'][number], name: string) => seen.headers.filter(([k]) => k === name).map(([, v]) => v);

describe('API aggregation (kube-aggregator)', () => {
  it('the availability controller probes the server with the front-proxy identity and reports Available=True (Passed)', async () => {
    expect(await available()).toMatchObject({ type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' });
    const probe = wardle.seen.find((s) => s.path === `/apis/${WARDLE_GROUP}/${WARDLE_VERSION}` && header(s, 'x-remote-user')[0] === 'system:kube-aggregator');
    expect(probe).toBeDefined();
    expect(header(probe!, 'x-remote-group')).toEqual(['system:masters']);
    expect(probe!.clientCN).toBe('front-proxy-client');
  });

  it.concurrent('extension-apiserver-authentication in the system namespace names the client CA and the front proxy that signs the proxied requests', async ({ expect }) => {
    // written by the server at start
    const data = await eventually(async () => (await call('GET', '/api/v1/namespaces/orch-system/configmaps/extension-apiserver-authentication')).data as Record<string, string>, 'the ConfigMap');
    expect(data['client-ca-file']).toContain(t.server.caPem.trim());
    expect(data['requestheader-username-headers']).toBe('["X-Remote-User"]');
    expect(data['requestheader-group-headers']).toBe('["X-Remote-Group"]');
    expect(data['requestheader-extra-headers-prefix']).toBe('["X-Remote-Extra-"]');
    expect(data['requestheader-allowed-names']).toBe('["front-proxy-client"]');
    // the certificate the server received was signed by the published requestheader CA, not the client CA
    const frontCa = new X509Certificate(data['requestheader-client-ca-file']!);
    const presented = new X509Certificate(wardle.seen[0]!.clientCertPem);
    expect(presented.verify(frontCa.publicKey)).toBe(true);
    expect(presented.verify(new X509Certificate(t.server.caPem).publicKey)).toBe(false);
  });

  it.concurrent("a Service that cannot lead to a server is reported with kube's reasons: ServicePortError, EndpointsNotFound, MissingEndpoints", async ({ expect }) => {
    const condition = async (name: string) => (await t.request('GET', `${AS}/${name}`)).json<Obj>().status?.conditions?.[0];
    const register = (group: string, service: string, port: number) => call('POST', AS, {
      apiVersion: 'apiregistration.orch.io/v1', kind: 'APIService', metadata: { name: `v1.${group}` },
      spec: { group, version: 'v1', service: { namespace: 'wardle', name: service, port }, insecureSkipTLSVerify: true, groupPriorityMinimum: 100, versionPriority: 10 },
    });
    await call('POST', '/api/v1/namespaces/wardle/services', { metadata: { name: 'no-endpoints' }, spec: { ports: [{ name: 'https', port: 443 }] } });
    await call('POST', '/api/v1/namespaces/wardle/services', { metadata: { name: 'empty' }, spec: { ports: [{ name: 'https', port: 443 }] } });
    await call('POST', '/api/v1/namespaces/wardle/endpoints', { metadata: { name: 'empty' }, subsets: [] });
    await Promise.all([register('port.example.com', 'api', 8080), register('noeps.example.com', 'no-endpoints', 443), register('empty.example.com', 'empty', 443)]);
    await expect.poll(() => condition('v1.port.example.com')).toMatchObject({ status: 'False', reason: 'ServicePortError', message: 'service/api in "wardle" is not listening on port 8080' });
    await expect.poll(() => condition('v1.noeps.example.com')).toMatchObject({ status: 'False', reason: 'EndpointsNotFound', message: 'cannot find endpoints for service/no-endpoints in "wardle"' });
    await expect.poll(() => condition('v1.empty.example.com')).toMatchObject({ status: 'False', reason: 'MissingEndpoints', message: 'endpoints for service/empty in "wardle" have no addresses with port name "https"' });
    // not Available: its requests are 503, as kube's proxy answers
    const r = await t.request('GET', '/apis/port.example.com/v1/things');
    expect(r.status).toBe(503);
    expect(r.json<Obj>()).toMatchObject({ reason: 'ServiceUnavailable', message: 'service unavailable' });
  });

  it('kubectl creates and gets flunders through orch; the server sees the user in X-Remote-* and never the client\'s credentials', async () => {
    const manifest = JSON.stringify({ apiVersion: `${WARDLE_GROUP}/${WARDLE_VERSION}`, kind: 'Flunder', metadata: { name: 'first' } });
    const created = await runKubectlInput(t.server.kubeconfigPath, manifest, ['create', '-f', '-']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`flunder.${WARDLE_GROUP}/first created`);
    const got = await runKubectl(t.server.kubeconfigPath, ['get', 'flunders', 'first', '-o', 'json']);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ kind: 'Flunder', metadata: { name: 'first', namespace: 'default' } });
    const post = wardle.seen.find((s) => s.method === 'POST')!;
    expect(header(post, 'x-remote-user')).toEqual(['orch-admin']);
    // one header per group, as kube's transport.SetAuthProxyHeaders
    expect(header(post, 'x-remote-group')).toEqual(expect.arrayContaining(['system:masters', 'system:authenticated']));
    expect(header(post, 'x-remote-group').every((g) => !g.includes(','))).toBe(true);
    expect(header(post, 'authorization')).toEqual([]);
    expect(post.clientCN).toBe('front-proxy-client');
  });

  it('a user\'s extra is sent as X-Remote-Extra-<percent-encoded key>; spoofed X-Remote-* headers are dropped', async () => {
    const before = wardle.seen.length;
    const r = await t.request('GET', FLUNDERS, {
      headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters', 'Impersonate-Extra-acme.com%2Fproject': 'p1', 'X-Remote-User': 'mallory' },
    });
    expect(r.status, r.text).toBe(200);
    const seen = wardle.seen.slice(before).find((s) => s.path.endsWith('/flunders'))!;
    expect(header(seen, 'x-remote-user')).toEqual(['jane']);
    expect(header(seen, 'x-remote-extra-acme.com%2fproject')).toEqual(['p1']);
    expect(seen.headers.some(([k]) => k.startsWith('impersonate-'))).toBe(false);
  });

  it('discovery lists the aggregated group with its resources, and kubectl api-resources sees them', async () => {
    await expect.poll(async () => ((await call('GET', '/apis')).groups as Obj[]).find((g) => g.name === WARDLE_GROUP)).toEqual({ name: WARDLE_GROUP, versions: [{ groupVersion: `${WARDLE_GROUP}/${WARDLE_VERSION}`, version: WARDLE_VERSION }], preferredVersion: { groupVersion: `${WARDLE_GROUP}/${WARDLE_VERSION}`, version: WARDLE_VERSION } });
    const aggregated = async () => {
      const r = await t.request('GET', '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
      return (r.json<Obj>().items as Obj[]).find((i) => i.metadata.name === WARDLE_GROUP);
    };
    await expect.poll(aggregated, { timeout: 5000 }).toMatchObject({ versions: [{ version: WARDLE_VERSION, freshness: 'Current', resources: [{ resource: 'flunders', scope: 'Namespaced', responseKind: { group: WARDLE_GROUP, version: WARDLE_VERSION, kind: 'Flunder' } }] }] });
    // placed by its groupPriorityMinimum (2000) as kube-aggregator places it: after kube's own groups (16100 and up), in both lists
    const legacy = ((await call('GET', '/apis')).groups as Obj[]).map((g) => g.name as string);
    const v2 = ((await t.request('GET', '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json<Obj>().items as Obj[]).map((i) => i.metadata.name as string);
    for (const names of [legacy, v2]) {
      expect(names.slice(0, 2)).toEqual(['apiregistration.orch.io', 'apps']);
      expect(names.indexOf(WARDLE_GROUP)).toBe(names.indexOf('flowcontrol.apiserver.orch.io') + 1);
    }
    // the group and version documents come from the server itself
    expect((await call('GET', `/apis/${WARDLE_GROUP}/${WARDLE_VERSION}`)).resources[0].name).toBe('flunders');
    expect((await call('GET', `/apis/${WARDLE_GROUP}`)).preferredVersion.version).toBe(WARDLE_VERSION);
    const r = await runKubectl(t.server.kubeconfigPath, ['api-resources', `--api-group=${WARDLE_GROUP}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^flunders\\s+${WARDLE_GROUP}/${WARDLE_VERSION}\\s+true\\s+Flunder`, 'm'));
  });

  it('/openapi/v3 lists the server\'s OpenAPI v3 document under its hash, serves it, and kubectl explain reads the aggregated kind', async () => {
    const path = `apis/${WARDLE_GROUP}/${WARDLE_VERSION}`;
    const entry = await eventually(async () => (await call('GET', '/openapi/v3')).paths[path] as { serverRelativeURL: string } | undefined, 'the aggregated OpenAPI v3 path');
    const index = (await call('GET', '/openapi/v3')).paths as Record<string, unknown>;
    // the served groups stay, in order
    expect(index['apis/apps/v1']).toBeDefined();
    expect(Object.keys(index)).toEqual([...Object.keys(index)].sort());
    const served = await t.request('GET', entry.serverRelativeURL);
    expect(served.status).toBe(200);
    expect(served.json()).toEqual(WARDLE_OPENAPI_V3);
    // kube-openapi's hash: the upper-case hex SHA-512 of the document served
    expect(entry.serverRelativeURL).toBe(`/openapi/v3/${path}?hash=${createHash('sha512').update(served.text).digest('hex').toUpperCase()}`);
    expect((await t.request('GET', `/openapi/v3/${path}?hash=stale`)).status).toBe(301);
    const r = await runKubectl(t.server.kubeconfigPath, ['explain', 'flunders.spec']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('FlunderSpec is the specification of a Flunder.');
    expect(r.stdout).toMatch(/reference\s+<string>/);
  });

  it('a watch streams through orch', async () => {
    wardle.flunders.set('default/watched', { apiVersion: `${WARDLE_GROUP}/${WARDLE_VERSION}`, kind: 'Flunder', metadata: { name: 'watched', namespace: 'default' } });
    const first = await new Promise<string>((resolve, reject) => {
      const req = request(`${t.server.url}${FLUNDERS}?watch=true`, { ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
          if (text.includes('\n')) {
            req.destroy();
            resolve(text);
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(first.split('\n')[0]!)).toMatchObject({ type: 'ADDED', object: { kind: 'Flunder' } });
  });

  it('kubectl get --watch streams the events through orch', async () => {
    const k = startKubectl(t.server.kubeconfigPath, ['get', 'flunders', '--watch-only', '-o', 'name']);
    try {
      await eventually(() => k.out().includes(`flunder.${WARDLE_GROUP}/watched`), 'the watched event', { context: () => k.err() });
    } finally {
      await k.stop();
    }
  });

  it('a WebSocket upgrade passes through to the server, with the user in X-Remote-User', async () => {
    const ws = new WebSocket(`${t.server.url.replace('https:', 'wss:')}${FLUNDERS}?watch=true`, [], { ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        ws.once('message', (d) => resolve(String(d)));
        ws.once('error', reject);
      });
      expect(first).toBe('hello orch-admin');
    } finally {
      ws.terminate();
    }
  });

  it('a user without RBAC on flunders gets 403 from orch and the server is not called', async () => {
    const bob = await kubeconfigFor(t, 'bob', await userCert(t, 'bob'));
    const before = wardle.seen.length;
    const r = await runKubectl(bob, ['get', 'flunders.wardle.example.com', 'first']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`flunders.${WARDLE_GROUP} "first" is forbidden: User "bob" cannot get resource "flunders" in API group "${WARDLE_GROUP}" in the namespace "default"`);
    expect(wardle.seen.slice(before).filter((s) => s.path.includes('/flunders'))).toEqual([]);
  });

  it('the server down: a proxied request is 503, and the availability controller reports Available=False (FailedDiscoveryCheck)', async () => {
    await wardle.close();
    const r = await t.request('GET', FLUNDERS);
    expect(r.status).toBe(503);
    expect(r.json<Obj>()).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
    // a change of the Endpoints re-checks the APIServices naming the Service
    await call('PATCH', '/api/v1/namespaces/wardle/endpoints/api', { metadata: { labels: { touched: 'yes' } } }, { 'Content-Type': 'application/merge-patch+json' });
    await expect.poll(available, { timeout: 5000 }).toMatchObject({ status: 'False', reason: 'FailedDiscoveryCheck' });
    expect((await available()).message).toContain('failing or missing response from https://127.0.0.1:');
    const after = await t.request('GET', FLUNDERS);
    expect(after.status).toBe(503);
    expect(after.json<Obj>()).toMatchObject({ reason: 'ServiceUnavailable', message: 'service unavailable' });
    // the group leaves discovery with its availability
    expect(((await call('GET', '/apis')).groups as Obj[]).some((g) => g.name === WARDLE_GROUP)).toBe(false);
  });
});

describe('--proxy-client-cert-file / --proxy-client-key-file with --requestheader-*', () => {
  it('the given certificate is presented and the ConfigMap publishes the requestheader flags', async () => {
    const own = await mkdtemp(join(tmpdir(), 'orch-aggr-flags-'));
    // a proxy CA of the operator's: its "admin" certificate stands for the proxy's client certificate
    const proxyPki = await ensurePki(join(own, 'proxy-pki'));
    await writeFile(join(own, 'proxy.crt'), proxyPki.admin.certPem);
    await writeFile(join(own, 'proxy.key'), proxyPki.admin.keyPem);
    await writeFile(join(own, 'proxy-ca.crt'), proxyPki.ca.certPem);
    const [s, w] = await Promise.all([
      startTestServer({
        proxyClient: { certFile: join(own, 'proxy.crt'), keyFile: join(own, 'proxy.key') },
        authn: { requestHeader: { clientCAFile: join(own, 'proxy-ca.crt'), usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'], allowedNames: ['orch-admin'] } },
      }),
      startWardleServer(own),
    ]);
    try {
      await registerWardle(s, w);
      expect(w.seen[0]!.clientCN).toBe('orch-admin');
      expect(w.seen[0]!.clientIssuerCN).toMatch(/^orch-ca@/);
      const cm = (await s.request('GET', '/api/v1/namespaces/orch-system/configmaps/extension-apiserver-authentication')).json<Obj>();
      expect(cm.data['requestheader-client-ca-file']).toBe(proxyPki.ca.certPem);
      expect(cm.data['requestheader-allowed-names']).toBe('["orch-admin"]');
    } finally {
      await Promise.all([s.stop(), w.close()]);
      await rm(own, { recursive: true, force: true });
    }
  });
});
