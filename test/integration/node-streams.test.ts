// Sub-resources a node agent serves (docs/nodeagent.md "Streams") before the pod is on a
// node: kube's 400 for an unscheduled pod (204 No Content for its log), 404 for an absent
// one, 503 for a service without endpoints. End to end through a real agent:
// test/nodeagent/streams.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('node-agent sub-resources of a pod without a node', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    await t.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
  });
  afterAll(async () => t.stop());

  it('answers 400 for an unscheduled pod, 404 for an absent one, 503 for the unserved proxies', async () => {
    for (const [method, sub] of [['POST', 'exec?command=true&stdout=1'], ['POST', 'attach?stdout=1'], ['POST', 'portforward?port=80']] as const) {
      const r = await t.request(method, `/api/v1/namespaces/default/pods/p/${sub}`);
      expect(r.status, sub).toBe(400);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'pod p does not have a host assigned' });
    }
    expect((await t.request('GET', '/api/v1/namespaces/default/pods/absent/log')).status).toBe(404);
    const proxy = await t.request('GET', '/api/v1/namespaces/default/pods/p/proxy');
    expect(proxy.status).toBe(400);
    expect(proxy.json().message).toBe('pod p does not have a host assigned');
    // the kubernetes Service has no selector: no pod to proxy to
    const svc = await t.request('GET', '/api/v1/namespaces/default/services/kubernetes/proxy');
    expect(svc.status).toBe(503);
    expect(svc.json().message).toMatch(/^no endpoints available for service "kubernetes"/);
    expect((await t.request('GET', '/api/v1/namespaces/default/services/absent:80/proxy/')).status).toBe(404);
    expect((await t.request('GET', '/api/v1/nodes/absent/proxy/healthz')).status).toBe(404);
  });

  it("has no log yet: kube's empty stream, 204 No Content, after the container check", async () => {
    // kube's LogLocation gives no location without a node, and an empty stream is answered 204
    const r = await t.request('GET', '/api/v1/namespaces/default/pods/p/log');
    expect([r.status, r.text, r.headers['content-type']]).toEqual([204, '', undefined]);
    const bad = await t.request('GET', '/api/v1/namespaces/default/pods/p/log?container=nope');
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ reason: 'BadRequest', message: 'container nope is not valid for pod p' });
    const k = await runKubectl(t.server.kubeconfigPath, ['logs', 'p']);
    expect([k.code, k.stdout, k.stderr]).toEqual([0, '', '']);
  });

  it('kubectl reports it for exec', async () => {
    const r = await runKubectl(t.server.kubeconfigPath, ['exec', 'p', '--', 'true']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('pod p does not have a host assigned');
  });
});
