// What a Service's type brings on the wire, as kube-apiserver 1.32 answers it:
// a health check node port for a Local LoadBalancer (allocated, claimed,
// released with the policy or the Service), LoadBalancers without node ports
// (allocateLoadBalancerNodePorts: false), ExternalName Services (no cluster
// IPs; switching to and from them frees and allocates), and headless only
// for ClusterIP. The allocator, the strategy and the repair controller work
// together here; the pure checks are in test/unit/service-validation.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

type Port = { port: number; name?: string; nodePort?: number };
type Svc = { metadata: { name: string }; spec: Record<string, unknown> & { ports?: Port[]; clusterIP?: string; healthCheckNodePort?: number } };
type Status = { reason: string; message: string; code: number };

const svc = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], selector: { app: name }, ...spec } });
const local = { type: 'LoadBalancer', externalTrafficPolicy: 'Local' };
const inRange = (p: number | undefined) => p !== undefined && p >= 30000 && p <= 32767;

describe('Service type fields on the wire', () => {
  let t: TestServer;
  const path = (name = '') => `/api/v1/namespaces/default/services${name ? `/${name}` : ''}`;
  const create = (body: object, query = '') => t.request('POST', `${path()}${query}`, { body });
  const patch = (name: string, spec: object) => t.request('PATCH', path(name), { body: { spec }, headers: { 'content-type': 'application/merge-patch+json' } });
  const get = async (name: string) => (await t.request('GET', path(name))).json<Svc>();
  /** a create that must succeed */
  const made = async (body: object): Promise<Svc> => {
    const r = await create(body);
    expect(r.status, r.text).toBe(201);
    return r.json<Svc>();
  };
  const refused = async (r: Promise<{ status: number; json<T>(): T }>, status: number): Promise<Status> => {
    const res = await r;
    expect(res.status).toBe(status);
    return res.json<Status>();
  };

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => t.stop());

  describe('healthCheckNodePort', () => {
    it('a Local LoadBalancer gets one from the node port range, apart from its node ports; a dry run shows one', async () => {
      const s = await made(svc('hc-auto', local));
      expect(inRange(s.spec.healthCheckNodePort)).toBe(true);
      expect(s.spec.ports!.map((p) => p.nodePort)).not.toContain(s.spec.healthCheckNodePort);
      const dry = await create(svc('hc-dry', { ...local, healthCheckNodePort: 30610 }), '?dryRun=All');
      expect(dry.json<Svc>().spec.healthCheckNodePort).toBe(30610);
      // the dry run claimed nothing
      expect((await made(svc('hc-after-dry', { ...local, healthCheckNodePort: 30610 }))).spec.healthCheckNodePort).toBe(30610);
    });

    it('a requested one is honoured; taken, out of range or the Service\'s own node port is kube\'s 500, and nothing is stored', async () => {
      expect((await made(svc('hc-asked', { ...local, healthCheckNodePort: 30600 }))).spec.healthCheckNodePort).toBe(30600);
      expect(await refused(create(svc('hc-taken', { ...local, healthCheckNodePort: 30600 })), 500)).toMatchObject({
        reason: 'InternalError', message: 'Internal error occurred: failed to allocate requested HealthCheck NodePort 30600: provided port is already allocated',
      });
      // one allocator for node ports and health check node ports, as kube's
      await made(svc('np-holder', { type: 'NodePort', ports: [{ port: 80, nodePort: 30601 }] }));
      expect((await refused(create(svc('hc-on-np', { ...local, healthCheckNodePort: 30601 })), 500)).message).toContain('HealthCheck NodePort 30601: provided port is already allocated');
      expect((await refused(create(svc('hc-own', { ...local, healthCheckNodePort: 30602, ports: [{ port: 80, nodePort: 30602 }] })), 500)).message).toContain(
        'HealthCheck NodePort 30602: provided port is already allocated');
      expect((await refused(create(svc('hc-far', { ...local, healthCheckNodePort: 80 })), 500)).message).toBe(
        'Internal error occurred: failed to allocate requested HealthCheck NodePort 80: provided port is not in the valid range. The range of valid ports is 30000-32767');
      for (const name of ['hc-taken', 'hc-on-np', 'hc-own', 'hc-far']) expect((await t.request('GET', path(name))).status).toBe(404);
      // a node port another Service asks for is refused while the health check holds it
      expect((await refused(create(svc('np-on-hc', { type: 'NodePort', ports: [{ port: 80, nodePort: 30600 }] })), 422)).message).toBe(
        'Service "np-on-hc" is invalid: spec.ports[0].nodePort: Invalid value: 30600: provided port is already allocated');
    });

    it('may not be set where it is not used, nor changed while it is (422, kube\'s words)', async () => {
      const only = "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'";
      expect((await refused(create(svc('hc-cluster', { type: 'LoadBalancer', healthCheckNodePort: 30620 })), 422)).message).toBe(
        `Service "hc-cluster" is invalid: spec.healthCheckNodePort: Invalid value: 30620: ${only}`);
      expect((await refused(create(svc('hc-np', { type: 'NodePort', externalTrafficPolicy: 'Local', healthCheckNodePort: 30620 })), 422)).message).toContain(only);
      const s = await made(svc('hc-fixed', local));
      const other = s.spec.healthCheckNodePort === 30621 ? 30622 : 30621;
      expect((await refused(patch('hc-fixed', { healthCheckNodePort: other }), 422)).message).toBe('Service "hc-fixed" is invalid: spec.healthCheckNodePort: Forbidden: field is immutable');
      // an update that leaves it out keeps it
      const put = await t.request('PUT', path('hc-fixed'), { body: { ...s, spec: { ...s.spec, healthCheckNodePort: undefined, selector: { app: 'x' } } } });
      expect(put.status).toBe(200);
      expect(put.json<Svc>().spec.healthCheckNodePort).toBe(s.spec.healthCheckNodePort);
    });

    it('comes with the policy or the type and goes with them, and with the Service: the port is free again', async () => {
      const s = await made(svc('hc-flip', { type: 'LoadBalancer' }));
      expect(s.spec.healthCheckNodePort).toBeUndefined();
      const toLocal = await patch('hc-flip', { externalTrafficPolicy: 'Local', healthCheckNodePort: 30630 });
      expect(toLocal.status).toBe(200);
      expect(toLocal.json<Svc>().spec.healthCheckNodePort).toBe(30630);
      const toCluster = await patch('hc-flip', { externalTrafficPolicy: 'Cluster' });
      expect(toCluster.json<Svc>().spec).not.toHaveProperty('healthCheckNodePort');
      await eventually(async () => (await create(svc('hc-reuse', { ...local, healthCheckNodePort: 30630 }))).status === 201, 'the released port claimed by another Service');
      // picked on the way in, released on the way out to ClusterIP
      const again = await patch('hc-flip', { externalTrafficPolicy: 'Local' });
      const picked = again.json<Svc>().spec.healthCheckNodePort;
      expect(inRange(picked)).toBe(true);
      const toClusterIP = await patch('hc-flip', { type: 'ClusterIP', externalTrafficPolicy: null });
      expect(toClusterIP.status).toBe(200);
      expect(toClusterIP.json<Svc>().spec).not.toHaveProperty('healthCheckNodePort');
      await eventually(async () => (await create(svc('hc-reuse2', { ...local, healthCheckNodePort: picked }))).status === 201, 'the port of a Service that became ClusterIP');
      expect((await t.request('DELETE', path('hc-reuse2'))).status).toBe(200);
      await eventually(async () => (await create(svc('hc-reuse3', { ...local, healthCheckNodePort: picked }))).status === 201, 'the port of a deleted Service');
    });
  });

  describe('allocateLoadBalancerNodePorts', () => {
    it('false: a LoadBalancer gets no node ports, keeps and claims the ones it asks for', async () => {
      const s = await made(svc('lb-bare', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80, name: 'a', nodePort: 30700 }, { port: 81, name: 'b' }] }));
      expect(s.spec.allocateLoadBalancerNodePorts).toBe(false);
      expect(s.spec.ports!.map((p) => p.nodePort)).toEqual([30700, undefined]);
      expect((await refused(create(svc('np-30700', { type: 'NodePort', ports: [{ port: 80, nodePort: 30700 }] })), 422)).message).toContain('provided port is already allocated');
      // defaulted to true on a LoadBalancer, which then gets node ports
      const d = await made(svc('lb-default', { type: 'LoadBalancer' }));
      expect(d.spec.allocateLoadBalancerNodePorts).toBe(true);
      expect(inRange(d.spec.ports![0]!.nodePort)).toBe(true);
    });

    it('only for LoadBalancer Services; dropped when one becomes another type', async () => {
      const forbidden = "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'";
      expect((await refused(create(svc('cip-alloc', { allocateLoadBalancerNodePorts: false })), 422)).message).toBe(`Service "cip-alloc" is invalid: ${forbidden}`);
      expect((await refused(create(svc('np-alloc', { type: 'NodePort', allocateLoadBalancerNodePorts: true })), 422)).message).toBe(`Service "np-alloc" is invalid: ${forbidden}`);
      const s = await made(svc('lb-shrink', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false }));
      const np = await patch('lb-shrink', { type: 'NodePort' });
      expect(np.status).toBe(200);
      expect(np.json<Svc>().spec).not.toHaveProperty('allocateLoadBalancerNodePorts');
      // a NodePort Service needs node ports: it gets them
      expect(inRange(np.json<Svc>().spec.ports![0]!.nodePort)).toBe(true);
      // one the update changed is refused
      void s;
      const back = await patch('lb-shrink', { type: 'LoadBalancer' });
      expect(back.json<Svc>().spec.allocateLoadBalancerNodePorts).toBe(true);
      expect((await refused(patch('lb-shrink', { type: 'ClusterIP', allocateLoadBalancerNodePorts: false, externalTrafficPolicy: null }), 422)).message).toContain(forbidden);
    });
  });

  describe('ExternalName', () => {
    it('needs a DNS name, takes no cluster IP or IP family, needs no ports, and keeps node ports without claiming them', async () => {
      const s = await made({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'en' }, spec: { type: 'ExternalName', externalName: 'db.example.com.' } });
      expect(s.spec).toEqual({ type: 'ExternalName', externalName: 'db.example.com.', sessionAffinity: 'None' });
      expect((await refused(create(svc('en-none', { type: 'ExternalName' })), 422)).message).toBe('Service "en-none" is invalid: spec.externalName: Required value');
      expect((await refused(create(svc('en-caps', { type: 'ExternalName', externalName: 'DB.example.com' })), 422)).message).toMatch(
        /^Service "en-caps" is invalid: spec\.externalName: Invalid value: "DB\.example\.com": a lowercase RFC 1123 subdomain/);
      expect((await refused(create(svc('en-ip', { type: 'ExternalName', externalName: 'a.example.com', clusterIP: '10.96.40.40' })), 422)).message).toBe(
        'Service "en-ip" is invalid: spec.clusterIPs: Forbidden: may not be set for ExternalName services');
      expect((await refused(create(svc('en-fam', { type: 'ExternalName', externalName: 'a.example.com', ipFamilyPolicy: 'SingleStack' })), 422)).message).toBe(
        'Service "en-fam" is invalid: spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services');
      const np = await made(svc('en-np', { type: 'ExternalName', externalName: 'a.example.com', ports: [{ port: 80, nodePort: 30710 }] }));
      expect(np.spec.ports![0]!.nodePort).toBe(30710);
      await made(svc('np-30710', { type: 'NodePort', ports: [{ port: 80, nodePort: 30710 }] }));
    });

    it('a Service turned ExternalName frees its cluster IP and node ports; turned back, it gets new ones', async () => {
      const s = await made(svc('to-name', { type: 'NodePort', clusterIP: '10.96.41.41', ports: [{ port: 80, nodePort: 30720 }] }));
      // a whole-object PUT, as kubectl edit and replace send: what the update left as it was goes
      const put = await t.request('PUT', path('to-name'), { body: { ...s, spec: { ...s.spec, type: 'ExternalName', externalName: 'db.example.com' } } });
      expect(put.status).toBe(200);
      const spec = put.json<Svc>().spec;
      for (const f of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'internalTrafficPolicy', 'externalTrafficPolicy']) expect(spec).not.toHaveProperty(f);
      expect(spec.ports![0]).not.toHaveProperty('nodePort');
      await eventually(async () => (await create(svc('ip-reuse', { clusterIP: '10.96.41.41' }))).status === 201, 'the freed cluster IP');
      await eventually(async () => (await create(svc('np-reuse', { type: 'NodePort', ports: [{ port: 80, nodePort: 30720 }] }))).status === 201, 'the freed node port');
      const back = await patch('to-name', { type: 'NodePort', externalName: null });
      expect(back.status).toBe(200);
      const b = back.json<Svc>().spec;
      expect(b.clusterIP).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\./);
      expect(b.clusterIP).not.toBe('10.96.41.41');
      expect(b).toMatchObject({ clusterIPs: [b.clusterIP], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster', externalTrafficPolicy: 'Cluster' });
      expect(inRange(b.ports![0]!.nodePort)).toBe(true);
      expect((await get('to-name')).spec.clusterIP).toBe(b.clusterIP);
    });

    it('turning ExternalName while changing the cluster IP is refused', async () => {
      const s = await made(svc('to-name-ip'));
      const r = await t.request('PUT', path('to-name-ip'), { body: { ...s, spec: { ...s.spec, type: 'ExternalName', externalName: 'a.example.com', clusterIP: '10.96.42.42', clusterIPs: ['10.96.42.42'] } } });
      expect((await refused(Promise.resolve(r), 422)).message).toBe('Service "to-name-ip" is invalid: spec.clusterIPs: Forbidden: may not be set for ExternalName services');
    });
  });

  it("headless is for ClusterIP only: NodePort and LoadBalancer with clusterIP None are 422", async () => {
    expect((await refused(create(svc('np-headless', { type: 'NodePort', clusterIP: 'None' })), 422)).message).toBe(
      'Service "np-headless" is invalid: spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for NodePort services');
    expect((await refused(create(svc('lb-headless', { type: 'LoadBalancer', clusterIP: 'None' })), 422)).message).toBe(
      'Service "lb-headless" is invalid: spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for LoadBalancer services');
    expect((await refused(create(svc('ips-mismatch', { clusterIP: '10.96.43.43', clusterIPs: ['10.96.43.44'] })), 422)).message).toBe(
      'Service "ips-mismatch" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.43.44"}: first value must match `clusterIP`');
  });
});
