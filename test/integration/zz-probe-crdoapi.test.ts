import { it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import { openCrd } from '../helpers/crds.js';
import { runKubectl } from '../helpers/kubectl.js';

it('probe', async () => {
  const t = await startTestServer({ apiDomain: 'k8s.io' });
  for (let i = 0; i < 3; i++) {
    const c = openCrd({ group: `g${i}.example.com`, plural: `as${i}`, kind: `A${i}` });
    c.apiVersion = 'apiextensions.k8s.io/v1';
    const s0 = Date.now();
    const r = await t.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: c });
    const s1 = Date.now();
    const v2 = await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
    const s2 = Date.now();
    const v2b = await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
    const s3 = Date.now();
    const v3 = await t.request('GET', `/openapi/v3/apis/g${i}.example.com/v1`);
    const s4 = Date.now();
    console.log(r.status, 'create', s1 - s0, 'v2 build+get', s2 - s1, v2.raw.length, 'v2 cached', s3 - s2, 'v3', s4 - s3, v3.raw.length);
  }
  let s = Date.now();
  console.log((await runKubectl(t.server.kubeconfigPath, ['explain', 'as0'])).code, 'explain1', Date.now() - s);
  s = Date.now();
  console.log((await runKubectl(t.server.kubeconfigPath, ['explain', 'as1'])).code, 'explain2', Date.now() - s);
  s = Date.now();
  console.log((await runKubectl(t.server.kubeconfigPath, ['get', 'as1'])).code, 'get', Date.now() - s);
  await t.stop();
}, 120000);
