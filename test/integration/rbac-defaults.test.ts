// The default roles and bindings are reconciled at every start (spec 001
// §5.14): missing rules and subjects come back (also into the aggregated
// `view`), a binding pointing at another role is recreated, and objects
// annotated autoupdate "false" are left alone.

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const G = 'rbac.authorization.orch.io';
const RBAC = `/apis/${G}/v1`;
type Obj = { metadata: { annotations?: Record<string, string>; resourceVersion?: string }; rules?: { verbs?: string[]; nonResourceURLs?: string[] }[]; subjects?: { name: string }[]; roleRef?: { name: string } };

describe('default roles reconcile at start', () => {
  it('restores what was removed unless autoupdate is "false"', async () => {
    let t: TestServer = await startTestServer();
    const dataDir = t.dataDir;
    const get = async (path: string) => (await t.request('GET', path)).json<Obj>();
    const put = async (path: string, o: Obj) => {
      const r = await t.request('PUT', path, { body: o });
      expect(r.status, r.text).toBe(200);
    };
    try {
      // a rule gone from system:discovery, a subject gone from system:public-info-viewer
      const disc = await get(`${RBAC}/clusterroles/system:discovery`);
      expect(disc.rules).toHaveLength(1);
      await put(`${RBAC}/clusterroles/system:discovery`, { ...disc, rules: [{ ...disc.rules![0], nonResourceURLs: ['/api'] }] } as Obj);
      const piv = await get(`${RBAC}/clusterrolebindings/system:public-info-viewer`);
      await put(`${RBAC}/clusterrolebindings/system:public-info-viewer`, { ...piv, subjects: piv.subjects!.slice(0, 1) });
      // the first rule of system:aggregate-to-view (configmaps, pods, …) removed: view loses it through aggregation
      const atv = await get(`${RBAC}/clusterroles/system:aggregate-to-view`);
      await put(`${RBAC}/clusterroles/system:aggregate-to-view`, { ...atv, rules: atv.rules!.slice(1) });
      await eventually(async () => !JSON.stringify((await get(`${RBAC}/clusterroles/view`)).rules).includes('configmaps'));
      // the operator opts system:monitoring out and trims it
      const mon = await get(`${RBAC}/clusterroles/system:monitoring`);
      await put(`${RBAC}/clusterroles/system:monitoring`, { ...mon, metadata: { ...mon.metadata, annotations: { ...mon.metadata.annotations, [`${G}/autoupdate`]: 'false' } }, rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }] } as Obj);
      // system:basic-user's binding now grants another role
      expect((await t.request('DELETE', `${RBAC}/clusterrolebindings/system:basic-user`)).status).toBe(200);
      const rb = { apiVersion: `${G}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'system:basic-user' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'view' }, subjects: [] };
      expect((await t.request('POST', `${RBAC}/clusterrolebindings`, { body: rb })).status).toBe(201);
      // without the public-info-viewer subject anonymous may not read /version
      expect((await t.request('GET', '/version', { anonymous: true })).status).toBe(403);

      await t.stop(true);
      t = await startTestServer({ dataDir });

      const urls = (o: Obj) => o.rules!.flatMap((r) => r.nonResourceURLs ?? []);
      expect(urls(await get(`${RBAC}/clusterroles/system:discovery`))).toEqual(expect.arrayContaining(['/api', '/apis', '/version', '/healthz']));
      expect((await get(`${RBAC}/clusterrolebindings/system:public-info-viewer`)).subjects!.map((s) => s.name)).toEqual(['system:authenticated', 'system:unauthenticated']);
      expect(urls(await get(`${RBAC}/clusterroles/system:monitoring`))).toEqual(['/metrics']);
      expect((await get(`${RBAC}/clusterrolebindings/system:basic-user`)).roleRef!.name).toBe('system:basic-user');
      expect((await t.request('GET', '/version', { anonymous: true })).status).toBe(200);
      await eventually(async () => JSON.stringify((await get(`${RBAC}/clusterroles/view`)).rules).includes('configmaps'));
    } finally {
      await t.stop();
    }
  });
});
