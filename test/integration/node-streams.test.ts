// Sub-resources a node agent serves in Kubernetes answer a clear Status until
// one does (issue #11 item 7): 404 for an absent object, 503 naming what is
// missing; kubectl reports it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('node-agent sub-resources before a node agent exists', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    await t.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
  });
  afterAll(async () => t.stop());

  it('answers 503 with a message for an existing pod, 404 for an absent one', async () => {
    for (const [method, sub] of [['GET', 'log'], ['POST', 'exec'], ['POST', 'attach'], ['POST', 'portforward'], ['GET', 'proxy']] as const) {
      const r = await t.request(method, `/api/v1/namespaces/default/pods/p/${sub}`);
      expect(r.status, sub).toBe(503);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', message: `pods/${sub} of pods "p" is served through a node agent, and no node agent serves it yet` });
      expect(r.headers['retry-after']).toBeUndefined();
    }
    expect((await t.request('GET', '/api/v1/namespaces/default/pods/absent/log')).status).toBe(404);
    expect((await t.request('GET', '/api/v1/namespaces/default/services/kubernetes/proxy')).status).toBe(503);
  });

  it('kubectl reports it', async () => {
    const r = await runKubectl(t.server.kubeconfigPath, ['get', '--raw', '/api/v1/namespaces/default/pods/p/log']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('no node agent serves it yet');
  });
});
