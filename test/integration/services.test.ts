// Service cluster IPs and node ports (issue #11 item 3): allocated from the
// configured ranges with the Service's own write (never twice, also under
// concurrency and through Raft), requested values honoured or refused with
// 422, a full range is a clear error, values come free when the Service goes,
// and the `kubernetes` Service holds the first address.
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../helpers/ports.js';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIpv4, parseIpv4Cidr, usable } from '../../src/registry/allocators/cidr.js';
import { type RunningServer, startServer } from '../../src/server/server.js';
import { ensurePki } from '../../src/server/pki.js';
import { loadServiceAccountKeys } from '../../src/auth/authn/sa-keys.js';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, rawRequest, startTestServer } from '../helpers/server.js';

type Svc = { metadata: { name: string; resourceVersion: string }; spec: Record<string, unknown> & { clusterIP?: string; ports: { port: number; nodePort?: number }[] }; status?: unknown };

const svc = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }], selector: { app: name }, ...spec },
});

describe('Service allocation on one server', () => {
  let t: TestServer;
  const create = (body: object, ns = 'default', query = '', agent?: Agent) => t.request('POST', `/api/v1/namespaces/${ns}/services${query}`, { body, agent });

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => t.stop());

  it('gives a ClusterIP Service an address of the range, its families and an empty load-balancer status', async () => {
    const r = await create(svc('web'));
    expect(r.status).toBe(201);
    const s = r.json<Svc>();
    expect(usable(parseIpv4Cidr('10.96.0.0/12'), parseIpv4(s.spec.clusterIP!)!)).toBe(true);
    expect(s.spec).toMatchObject({ clusterIPs: [s.spec.clusterIP], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', type: 'ClusterIP', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' });
    expect(s.status).toEqual({ loadBalancer: {} });
    expect(s.spec.clusterIP).not.toBe('10.96.0.1');
  });

  it('the kubernetes Service holds the first address and points at the API port', async () => {
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/default/services/kubernetes')).status === 200, 'kubernetes Service');
    const k = (await t.request('GET', '/api/v1/namespaces/default/services/kubernetes')).json<Svc>();
    expect(k.spec.clusterIP).toBe('10.96.0.1');
    expect(k.spec.ports[0]).toMatchObject({ name: 'https', port: 443, targetPort: t.server.port });
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).status === 200, 'kubernetes Endpoints');
    const ep = (await t.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json<{ subsets: unknown[] }>();
    expect(ep.subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: t.server.port, protocol: 'TCP' }] }]);
  });

  it('honours a requested address, and refuses one that is taken or outside the range (422)', async () => {
    expect((await create(svc('asked', { clusterIP: '10.96.7.7' }))).json<Svc>().spec.clusterIP).toBe('10.96.7.7');
    const taken = await create(svc('asked-again', { clusterIP: '10.96.7.7' }));
    expect(taken.status).toBe(422);
    expect(taken.json<{ message: string }>().message).toContain('provided IP is already allocated');
    const outside = await create(svc('asked-outside', { clusterIP: '192.168.1.1' }));
    expect(outside.status).toBe(422);
    expect(outside.json<{ message: string }>().message).toContain('The range of valid IPs is 10.96.0.0/12');
    // nothing was stored for the refused ones
    expect((await t.request('GET', '/api/v1/namespaces/default/services/asked-again')).status).toBe(404);
  });

  it('headless Services get no address; dry run shows one and claims nothing', async () => {
    const h = (await create(svc('headless', { clusterIP: 'None' }))).json<Svc>();
    expect(h.spec).toMatchObject({ clusterIP: 'None', clusterIPs: ['None'] });
    const dry = await create(svc('dry', { clusterIP: '10.96.8.8' }), 'default', '?dryRun=All');
    expect(dry.status).toBe(201);
    expect((await create(svc('real', { clusterIP: '10.96.8.8' }))).status).toBe(201);
  });

  it('keeps the address on an update that leaves it out, and refuses a change (422)', async () => {
    const s = (await create(svc('kept'))).json<Svc>();
    const { clusterIP, clusterIPs, ...rest } = s.spec;
    void clusterIPs;
    const put = await t.request('PUT', '/api/v1/namespaces/default/services/kept', { body: { ...s, spec: { ...rest, selector: { app: 'other' } } } });
    expect(put.status).toBe(200);
    expect(put.json<Svc>().spec.clusterIP).toBe(clusterIP);
    const change = await t.request('PUT', '/api/v1/namespaces/default/services/kept', { body: { ...put.json<Svc>(), spec: { ...put.json<Svc>().spec, clusterIP: '10.96.9.9', clusterIPs: ['10.96.9.9'] } } });
    expect(change.status).toBe(422);
  });

  it('allocates node ports for NodePort Services and refuses taken or out-of-range ones (422)', async () => {
    const np = (await create(svc('np', { type: 'NodePort', ports: [{ port: 80, name: 'http' }, { port: 443, name: 'tls' }] }))).json<Svc>();
    const ports = np.spec.ports.map((p) => p.nodePort!);
    for (const p of ports) expect(p >= 30000 && p <= 32767).toBe(true);
    expect(new Set(ports).size).toBe(2);
    const clash = await create(svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: ports[0] }] }));
    expect(clash.status).toBe(422);
    expect(clash.json<{ message: string }>().message).toContain('provided port is already allocated');
    const outside = await create(svc('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 80 }] }));
    expect(outside.status).toBe(422);
    const lb = (await create(svc('lb', { type: 'LoadBalancer' }))).json<Svc>();
    expect(lb.spec.ports[0]!.nodePort).toBeGreaterThanOrEqual(30000);
    expect(lb.status).toEqual({ loadBalancer: {} });
  });

  it('refuses one node port twice in a Service (422, not a store error), on create, dry run and update; other protocols may share it', async () => {
    const twice = (name: string) => svc(name, { type: 'NodePort', ports: [{ port: 80, name: 'a', nodePort: 30100 }, { port: 81, name: 'b', nodePort: 30100 }] });
    for (const query of ['', '?dryRun=All']) {
      const r = await create(twice('dup-np'), 'default', query);
      expect(r.status).toBe(422);
      expect(r.json<{ message: string }>().message).toBe('Service "dup-np" is invalid: spec.ports[1].nodePort: Duplicate value: 30100');
    }
    const mixed = await create(svc('np-protocols', { type: 'NodePort', ports: [{ port: 53, name: 'dns', nodePort: 30101 }, { port: 53, name: 'dns-udp', protocol: 'UDP', nodePort: 30101 }] }));
    expect(mixed.status).toBe(201);
    const one = (await create(svc('np-grow', { type: 'NodePort', ports: [{ port: 80, name: 'a', nodePort: 30102 }] }))).json<Svc>();
    const grown = { ...one, spec: { ...one.spec, ports: [...one.spec.ports, { port: 81, name: 'b', nodePort: 30102 }] } };
    const upd = await t.request('PUT', '/api/v1/namespaces/default/services/np-grow', { body: grown });
    expect(upd.status).toBe(422);
    expect(upd.json<{ message: string }>().message).toContain('spec.ports[1].nodePort: Duplicate value: 30102');
  });

  it('serves IPv4 only: IPv6 and dual-stack requests are 422 in kube words; a selectorless headless Service is dual-stack all the same', async () => {
    const msg = async (body: object, query = '') => {
      const r = await create(body, 'default', query);
      expect(r.status).toBe(422);
      return r.json<{ message: string }>().message;
    };
    expect(await msg(svc('v6', { ipFamilies: ['IPv6'] }))).toBe('Service "v6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster');
    expect(await msg(svc('v6', { ipFamilies: ['IPv6'] }), '?dryRun=All')).toContain('not configured on this cluster');
    expect(await msg(svc('dual', { ipFamilyPolicy: 'RequireDualStack' }))).toBe('Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');
    expect(await msg(svc('v6ip', { clusterIP: 'fd00::10' }))).toBe('Service "v6ip" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster');
    expect(await msg(svc('badip', { clusterIP: 'abc' }))).toBe('Service "badip" is invalid: spec.clusterIPs[0]: Invalid value: "abc": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
    expect(await msg(svc('outside', { clusterIP: '1.2.3.4' }))).toBe(
      'Service "outside" is invalid: spec.clusterIPs: Invalid value: []string{"1.2.3.4"}: failed to allocate IP 1.2.3.4: the provided IP (1.2.3.4) is not in the valid range. The range of valid IPs is 10.96.0.0/12');
    const prefer = (await create(svc('prefer', { ipFamilyPolicy: 'PreferDualStack' }))).json<Svc>();
    expect(prefer.spec).toMatchObject({ ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4'] });
    const { selector, ...noSelector } = svc('bare', { clusterIP: 'None' }).spec;
    void selector;
    const bare = await create({ ...svc('bare'), spec: noSelector });
    expect(bare.status).toBe(201);
    expect(bare.json<Svc>().spec).toMatchObject({ clusterIP: 'None', clusterIPs: ['None'], ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] });
    const selected = (await create(svc('selected', { clusterIP: 'None' }))).json<Svc>();
    expect(selected.spec).toMatchObject({ ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'] });
    // an update keeps them
    const again = await t.request('PUT', '/api/v1/namespaces/default/services/bare', { body: { ...bare.json<Svc>(), metadata: { ...bare.json<Svc>().metadata, labels: { a: 'b' } } } });
    expect(again.status).toBe(200);
    expect(again.json<Svc>().spec).toMatchObject({ ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] });
  });

  it('a zero targetPort (absent, 0 or "") is the port, on create, update and patch (SetDefaults_Service)', async () => {
    const s = (await create(svc('tp', { ports: [{ port: 80, name: 'a', targetPort: 0 }, { port: 81, name: 'b', targetPort: '' }, { port: 82, name: 'c' }] }))).json<Svc>();
    expect(s.spec.ports.map((p) => (p as { targetPort?: unknown }).targetPort)).toEqual([80, 81, 82]);
    const put = await t.request('PUT', '/api/v1/namespaces/default/services/tp', { body: { ...s, spec: { ...s.spec, ports: [{ port: 90, name: 'a', targetPort: 0 }] } } });
    expect(put.json<Svc>().spec.ports).toMatchObject([{ port: 90, targetPort: 90 }]);
    const patch = await t.request('PATCH', '/api/v1/namespaces/default/services/tp', {
      body: { spec: { ports: [{ port: 91, name: 'a', targetPort: '' }] } }, headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patch.status).toBe(200);
    expect(patch.json<Svc>().spec.ports).toMatchObject([{ port: 91, targetPort: 91 }]);
  });

  it('refuses fields its type does not use, and bad port names, with kube words (ValidateService)', async () => {
    const msg = async (body: object) => {
      const r = await create(body);
      expect(r.status).toBe(422);
      return r.json<{ message: string }>().message;
    };
    expect(await msg(svc('etp', { externalTrafficPolicy: 'Local' }))).toBe('Service "etp" is invalid: spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services');
    expect(await msg(svc('lbsr', { loadBalancerSourceRanges: ['10.0.0.0/8'] }))).toBe('Service "lbsr" is invalid: spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is \'LoadBalancer\'');
    expect(await msg(svc('pname', { ports: [{ port: 80, name: 'Bad_Name' }] }))).toBe(
      'Service "pname" is invalid: spec.ports[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')');
    expect(await msg(svc('tname', { ports: [{ port: 80, targetPort: 'Bad_Name' }] }))).toBe(
      'Service "tname" is invalid: spec.ports[0].targetPort: Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
    // a ClusterIP Service with external IPs is externally accessible: the policy is defaulted and allowed
    const ext = await create(svc('ext', { externalIPs: ['192.0.2.10'], externalTrafficPolicy: 'Local' }));
    expect(ext.status).toBe(201);
  });

  it('a type change drops what the new type does not use unless the update changed it (dropTypeDependentFields)', async () => {
    const lb = (await create(svc('shrink', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', loadBalancerClass: 'example.com/lb' }))).json<Svc>();
    expect(lb.spec).toMatchObject({ externalTrafficPolicy: 'Local', allocateLoadBalancerNodePorts: true });
    const r = await t.request('PUT', '/api/v1/namespaces/default/services/shrink', { body: { ...lb, spec: { ...lb.spec, type: 'ClusterIP' } } });
    expect(r.status).toBe(200);
    const spec = r.json<Svc>().spec;
    for (const f of ['externalTrafficPolicy', 'allocateLoadBalancerNodePorts', 'loadBalancerClass', 'healthCheckNodePort']) expect(spec[f]).toBeUndefined();
    expect(spec.ports[0]!.nodePort).toBeUndefined();
    const np = (await create(svc('np-to-cip', { type: 'NodePort' }))).json<Svc>();
    const patched = await t.request('PATCH', '/api/v1/namespaces/default/services/np-to-cip', { body: { spec: { type: 'ClusterIP' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(patched.status).toBe(200);
    expect(patched.json<Svc>().spec).not.toHaveProperty('externalTrafficPolicy');
    void np;
  });

  it('frees the address and node ports when the Service is deleted', async () => {
    const s = (await create(svc('gone', { type: 'NodePort', clusterIP: '10.96.10.10', ports: [{ port: 80, nodePort: 31000 }] }))).json<Svc>();
    expect(s.spec.clusterIP).toBe('10.96.10.10');
    expect((await t.request('DELETE', '/api/v1/namespaces/default/services/gone')).status).toBe(200);
    await eventually(async () => (await create(svc('back', { type: 'NodePort', clusterIP: '10.96.10.10', ports: [{ port: 80, nodePort: 31000 }] }))).status === 201, 'the values free again');
  });

  it('never gives one address twice across 1,000 concurrent creates', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'many' } } });
    // 64 in flight over kept-alive connections: 1,000 TLS handshakes at once overflow
    // the listen backlog of a loaded host (ECONNRESET) and cost more than the creates
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const results: Awaited<ReturnType<typeof create>>[] = new Array(1000);
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < 1000; i = next++) results[i] = await create(svc(`s${i}`), 'many', '', agent);
      }),
    );
    agent.destroy();
    expect(results.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
    const ips = results.map((r) => r.json<Svc>().spec.clusterIP!);
    expect(new Set(ips).size).toBe(1000);
  }, 120_000);
});

describe('claims that race', () => {
  let t: TestServer;
  beforeAll(async () => {
    // 20 node ports for 20 concurrent NodePort Services: most first picks collide
    t = await startTestServer({ serviceNodePortRange: '30000-30019' });
  });
  afterAll(async () => t.stop());

  it('a create that lost its picked values to a concurrent create picks again, not taking them for requested ones', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.request('POST', '/api/v1/namespaces/default/services', { body: svc(`race${i}`, { type: 'NodePort' }) })),
    );
    expect(results.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text.slice(0, 200)}`)).toEqual([]);
    const ports = results.map((r) => r.json<Svc>().spec.ports[0]!.nodePort);
    expect(new Set(ports).size).toBe(20);
  });
});

describe('a full range', () => {
  let t: TestServer;
  beforeAll(async () => {
    // /29: 6 usable addresses, the first is the kubernetes Service's
    t = await startTestServer({ serviceClusterIpRange: '10.0.0.0/29', serviceNodePortRange: '30000-30001' });
  });
  afterAll(async () => t.stop());

  it('is a clear error, and storing nothing', async () => {
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/default/services/kubernetes')).status === 200, 'kubernetes Service');
    for (let i = 0; i < 5; i++) expect((await t.request('POST', '/api/v1/namespaces/default/services', { body: svc(`f${i}`) })).status).toBe(201);
    const full = await t.request('POST', '/api/v1/namespaces/default/services', { body: svc('f5') });
    expect(full.status).toBe(500);
    expect(full.json()).toMatchObject({ reason: 'InternalError', message: 'Internal error occurred: failed to allocate a serviceIP: range is full' });
    expect((await t.request('GET', '/api/v1/namespaces/default/services/f5')).status).toBe(404);
  });
});


describe('Service allocation in a 3-member cluster', () => {
  const members: RunningServer[] = [];
  const dirs: string[] = [];
  const agents = new Map<RunningServer, Agent>();

  beforeAll(async () => {
    const root = await mkdtemp(join(tmpdir(), 'orch-svc-cluster-'));
    dirs.push(root);
    const names = ['m1', 'm2', 'm3'];
    const peers = await Promise.all(names.map(() => freePort()));
    const initialCluster = Object.fromEntries(names.map((n, i) => [n, `127.0.0.1:${peers[i]}`]));
    // the members share one PKI, made once before they start
    await ensurePki(join(root, 'pki'), { hosts: ['localhost', '127.0.0.1', '::1'] });
    loadServiceAccountKeys({ defaultKeyPath: join(root, 'pki', 'sa.key') });
    const started = await Promise.all(
      names.map((name) =>
        startServer({ dataDir: join(root, name), pkiDir: join(root, 'pki'), bindAddress: '127.0.0.1', securePort: 0, apiDomain: 'orch.io', log: () => {}, cluster: { name, initialCluster, tickMs: 100 } }),
      ),
    );
    members.push(...started);
    // kept-alive connections per member: the creates, not 1,000 TLS handshakes, are what is measured
    for (const m of started) agents.set(m, new Agent({ keepAlive: true, maxSockets: 16 }));
  }, 120_000);
  afterAll(async () => {
    for (const a of agents.values()) a.destroy();
    await Promise.all(members.map((m) => m.shutdown()));
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  /**
   * A create as client-go retries it: a 503/504 from the replicated store is
   * retryable ("may or may not have been applied", spec 000 §4.10); a 409 on
   * the retry means the first attempt was applied, so the stored object is read.
   * The 2-core CI host is shared, so a Raft leader change under load can time
   * out a proposal; the allocation invariant is checked on what is stored.
   */
  async function createLikeAClient(m: RunningServer, name: string, body: object): Promise<{ status: number; text: string; svc?: Svc }> {
    let uncertain = false;
    const agent = agents.get(m)!;
    for (let attempt = 0; ; attempt++) {
      const r = await rawRequest(m, 'POST', '/api/v1/namespaces/default/services', { body, agent });
      if (r.status === 201) return { status: 201, text: r.text, svc: r.json<Svc>() };
      if (r.status === 409 && uncertain) {
        for (let read = 0; ; read++) {
          const g = await rawRequest(m, 'GET', `/api/v1/namespaces/default/services/${name}`, { agent });
          if (g.status === 200) return { status: 200, text: g.text, svc: g.json<Svc>() };
          if ((g.status !== 503 && g.status !== 504) || read >= 10) return { status: g.status, text: g.text };
          await new Promise((res) => setTimeout(res, 500));
        }
      }
      if ((r.status !== 503 && r.status !== 504) || attempt >= 10) return { status: r.status, text: r.text };
      uncertain = true;
      await new Promise((res) => setTimeout(res, 500));
    }
  }

  it('never gives one address or node port twice across 1,000 concurrent creates spread over every member', async () => {
    const N = 1000;
    // bounded concurrency (32 in flight, round-robin over the members): every create
    // races others for the same free values, without queueing 1,000 sockets at once
    const IN_FLIGHT = 32;
    const results: { status: number; text: string; svc?: Svc }[] = new Array(N);
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let i = next++; i < N; i = next++) {
          // every fourth is a NodePort Service: node ports are claimed in the same write
          const body = svc(`c${i}`, i % 4 === 0 ? { type: 'NodePort' } : {});
          results[i] = await createLikeAClient(members[i % 3]!, `c${i}`, body);
        }
      }),
    );
    expect(results.filter((r) => !r.svc).map((r) => `${r.status} ${r.text.slice(0, 300)}`)).toEqual([]);
    const ips = results.map((r) => r.svc!.spec.clusterIP!);
    expect(new Set(ips).size).toBe(N);
    const ports = results.flatMap((r) => r.svc!.spec.ports.map((p) => p.nodePort).filter((p) => p !== undefined));
    expect(ports.length).toBe(N / 4);
    expect(new Set(ports).size).toBe(N / 4);
    // what is stored agrees, read back through every member (the kubernetes Service included)
    for (const m of members) {
      await eventually(async () => {
        const list = (await rawRequest(m, 'GET', '/api/v1/namespaces/default/services')).json<{ items: Svc[] }>().items;
        return list.length === N + 1;
      }, 'every member to have applied the creates');
      const list = (await rawRequest(m, 'GET', '/api/v1/namespaces/default/services')).json<{ items: Svc[] }>().items;
      const stored = list.map((x) => x.spec.clusterIP!);
      expect(new Set(stored).size).toBe(N + 1);
    }
  }, 300_000);
});
