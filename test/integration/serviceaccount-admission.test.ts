// The ServiceAccount admission plugin and node tokens against a started server
// (spec 001 §5.5, §5.15): kubectl run gets the default account and the token
// volume; a missing account is kube's 403; updates cannot change the account
// nor add the volume again; --disable-admission-plugins turns it off; a node
// may request tokens only bound to a pod (with its uid) scheduled on it, and
// only for the account that pod runs as.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let n1: { certPem: string; keyPem: string };
type Pod = { metadata: { name: string; uid: string; resourceVersion: string }; spec: Record<string, unknown> & { volumes?: { name: string; projected?: unknown }[]; containers: { volumeMounts?: unknown[] }[] } };

beforeAll(async () => {
  t = await startTestServer({ authorization: { mode: 'Node,RBAC' } });
  const pki = await loadPki(join(t.dataDir, 'pki'));
  n1 = await issueClientCertificate(pki, { commonName: 'system:node:n1', organizations: ['system:nodes'] });
});
afterAll(async () => {
  await t?.stop();
});

const podBody = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });

describe('ServiceAccount admission over the API', () => {
  it('kubectl run: the default account, its mirror field and the token volume, read-only at the well-known path', async () => {
    const r = await runKubectl(join(t.dataDir, 'admin.kubeconfig'), ['run', 'web', '--image=nginx', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const pod = JSON.parse(r.stdout) as Pod;
    expect(pod.spec.serviceAccountName).toBe('default');
    expect(pod.spec.serviceAccount).toBe('default');
    const vol = pod.spec.volumes!.find((v) => v.name.startsWith('orch-api-access-'))!;
    expect(vol.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'orch-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    expect(pod.spec.containers[0]!.volumeMounts).toEqual([{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/orch.io/serviceaccount' }]);
  });

  it("a missing account is kube's 403 and nothing is stored", async () => {
    const r = await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('lost', { serviceAccountName: 'nobody' }) });
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'pods "lost" is forbidden: error looking up service account default/nobody: serviceaccount "nobody" not found',
      details: { name: 'lost', kind: 'pods' },
    });
    expect((await t.request('GET', '/api/v1/namespaces/default/pods/lost')).status).toBe(404);
    // the deprecated field names the account as well
    const old = await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('lost2', { serviceAccount: 'nobody' }) });
    expect(old.status).toBe(403);
    // in a namespace that does not exist the 404 of the namespace comes first
    const nons = await t.request('POST', '/api/v1/namespaces/nowhere/pods', { body: podBody('x') });
    expect(nons.status).toBe(404);
  });

  it('an account that opts out, a pod that opts in; the account of a pod cannot change and an update adds nothing', async () => {
    expect((await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'quiet' }, automountServiceAccountToken: false } })).status).toBe(201);
    const quiet = await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('q', { serviceAccountName: 'quiet' }) });
    expect(quiet.status, quiet.text).toBe(201);
    expect(quiet.json<Pod>().spec.volumes).toBeUndefined();
    const loud = await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('l', { serviceAccountName: 'quiet', automountServiceAccountToken: true }) });
    expect(loud.json<Pod>().spec.volumes).toHaveLength(1);
    const p = loud.json<Pod>();
    // an update that changes the account is refused by pod immutability (unconditional: the scheduler may bind the pod meanwhile)
    const { resourceVersion: _rv, ...meta } = p.metadata;
    const changed = await t.request('PUT', '/api/v1/namespaces/default/pods/l', { body: { ...p, metadata: meta, spec: { ...p.spec, serviceAccountName: 'default', serviceAccount: 'default' } } });
    expect(changed.status).toBe(422);
    expect(changed.text).toContain('pod updates may not change fields');
    // an update of labels keeps the one volume
    const relabel = await t.request('PATCH', '/api/v1/namespaces/default/pods/l', { body: { metadata: { labels: { a: 'b' } } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(relabel.status).toBe(200);
    expect(relabel.json<Pod>().spec.volumes).toEqual(p.spec.volumes);
  });

  it('mirror pods get nothing and may not name an account', async () => {
    const ann = { 'orch.io/config.mirror': 'h' };
    const ok = await t.request('POST', '/api/v1/namespaces/default/pods', { body: { ...podBody('m1', { nodeName: 'n1' }), metadata: { name: 'm1', annotations: ann } } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json<Pod>().spec.serviceAccountName).toBeUndefined();
    expect(ok.json<Pod>().spec.volumes).toBeUndefined();
    const bad = await t.request('POST', '/api/v1/namespaces/default/pods', { body: { ...podBody('m2', { serviceAccountName: 'default' }), metadata: { name: 'm2', annotations: ann } } });
    expect(bad.status).toBe(403);
    expect(bad.json<{ message: string }>().message).toBe('pods "m2" is forbidden: a mirror pod may not reference service accounts');
  });
});

describe('node tokens (Node authorizer and NodeRestriction)', () => {
  const tokenPath = (sa: string) => `/api/v1/namespaces/default/serviceaccounts/${sa}/token`;
  const request = (ref: Record<string, unknown> | undefined) => ({ apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: { ...(ref ? { boundObjectRef: ref } : {}) } });

  it('a node may request a token only bound to a pod on it, with its uid, for the account the pod runs as', async () => {
    expect((await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'other' } } })).status).toBe(201);
    const on = (await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('on1', { nodeName: 'n1' }) })).json<Pod>();
    const off = (await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('on2', { nodeName: 'n2' }) })).json<Pod>();
    const ref = (p: Pod) => ({ apiVersion: 'v1', kind: 'Pod', name: p.metadata.name, uid: p.metadata.uid });
    // the graph follows the applied feed: poll until the node may ask (no timing assertion)
    let ok = 0;
    for (let i = 0; i < 50 && ok !== 201; i++) {
      ok = (await t.request('POST', tokenPath('default'), { cert: n1, body: request(ref(on)) })).status;
      if (ok !== 201) await new Promise((r) => setTimeout(r, 50));
    }
    expect(ok).toBe(201);
    const msg = async (sa: string, r: Record<string, unknown> | undefined) => {
      const res = await t.request('POST', tokenPath(sa), { cert: n1, body: request(r) });
      return `${res.status} ${res.json<{ message: string }>().message}`;
    };
    expect(await msg('default', undefined)).toBe('403 serviceaccounts "default" is forbidden: node requested token not bound to a pod');
    expect(await msg('default', { apiVersion: 'v1', kind: 'Pod', name: 'on1' })).toBe('403 serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid');
    expect(await msg('default', { ...ref(on), uid: 'x' })).toContain('409 the UID in the bound object reference (x) does not match');
    expect(await msg('default', ref(off))).toBe('403 serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node');
    // an account no pod of the node uses: the Node authorizer has no opinion, RBAC none either
    expect(await msg('other', ref(on))).toMatch(/^403 serviceaccounts "other" is forbidden: User "system:node:n1" cannot create resource "serviceaccounts\/token"/);
    // the admin binding a token to a pod of another account: kube's token REST refuses it
    const admin = await t.request('POST', tokenPath('other'), { body: request(ref(on)) });
    expect(admin.status).toBe(400);
    expect(admin.json<{ message: string }>().message).toBe('cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.');
  });
});

describe('--disable-admission-plugins ServiceAccount', () => {
  it('leaves pods as sent', async () => {
    const off = await startTestServer({ admissionPlugins: { disable: ['ServiceAccount'] } });
    try {
      const r = await off.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('plain', { serviceAccountName: 'nobody' }) });
      expect(r.status, r.text).toBe(201);
      expect(r.json<Pod>().spec.volumes).toBeUndefined();
    } finally {
      await off.stop();
    }
  });
});
