// kubectl 1.32's typed commands send protobuf bodies and ask for protobuf
// answers (spec 000 §2.7, §4.3). Real kubectl against a real server with
// `--api-domain k8s.io` (kubectl's typed clients use the Kubernetes groups).

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';
import { SAMPLE_CSR_REQUEST } from '../fixtures/csr-request.js';

let t: TestServer;
let cacheDir: string;

const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args, ['--cache-dir', cacheDir]);

async function getJson(...args: string[]): Promise<Record<string, unknown>> {
  const r = await kubectl('get', ...args, '-o', 'json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
  cacheDir = await mkdtemp(join(tmpdir(), 'orch-kubectl-cache-'));
});
afterAll(async () => {
  await t?.stop();
});

describe('kubectl typed commands (protobuf bodies)', () => {
  it('create namespace, configmap, secret and serviceaccount', async () => {
    let r = await kubectl('create', 'namespace', 'typed', '-v=8');
    expect(r.code, r.stderr).toBe(0);
    // kubectl really spoke protobuf, and got protobuf back
    expect(r.stderr).toContain('Content-Type: application/vnd.kubernetes.protobuf');
    expect(r.stderr).toMatch(/Response Headers:[\s\S]*Content-Type: application\/vnd\.kubernetes\.protobuf/);
    expect(r.stdout).toContain('namespace/typed created');
    expect(await getJson('namespace', 'typed')).toMatchObject({ kind: 'Namespace', metadata: { name: 'typed' }, status: { phase: 'Active' } });

    r = await kubectl('-n', 'typed', 'create', 'configmap', 'cfg', '--from-literal=a=b', '--from-literal=empty=');
    expect(r.code, r.stderr).toBe(0);
    const cm = await getJson('-n', 'typed', 'configmap', 'cfg');
    expect(cm.data).toEqual({ a: 'b', empty: '' });
    // the zero generation kubectl's protobuf carries is read as absent, not stored as 0
    expect((cm.metadata as Record<string, unknown>).generation).not.toBe(0);

    r = await kubectl('-n', 'typed', 'create', 'secret', 'generic', 'sec', '--from-literal=user=admin');
    expect(r.code, r.stderr).toBe(0);
    const sec = await getJson('-n', 'typed', 'secret', 'sec');
    expect(sec.type).toBe('Opaque');
    expect(Buffer.from((sec.data as Record<string, string>).user!, 'base64').toString()).toBe('admin');

    r = await kubectl('-n', 'typed', 'create', 'serviceaccount', 'robot');
    expect(r.code, r.stderr).toBe(0);
    expect(await getJson('-n', 'typed', 'serviceaccount', 'robot')).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'typed' } });
  });

  it('create role, rolebinding and service clusterip; -o yaml shows them', async () => {
    let r = await kubectl('-n', 'typed', 'create', 'role', 'pod-reader', '--verb=get', '--verb=list', '--resource=pods');
    expect(r.code, r.stderr).toBe(0);
    const role = await getJson('-n', 'typed', 'role', 'pod-reader');
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]);

    r = await kubectl('-n', 'typed', 'create', 'rolebinding', 'read-pods', '--role=pod-reader', '--user=alice', '--serviceaccount=typed:robot');
    expect(r.code, r.stderr).toBe(0);
    const rb = await getJson('-n', 'typed', 'rolebinding', 'read-pods');
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' });
    expect(rb.subjects).toEqual(
      expect.arrayContaining([
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
        { kind: 'ServiceAccount', name: 'robot', namespace: 'typed' },
      ]),
    );

    r = await kubectl('-n', 'typed', 'create', 'service', 'clusterip', 'web', '--tcp=80:8080');
    expect(r.code, r.stderr).toBe(0);
    const y = await kubectl('-n', 'typed', 'get', 'service', 'web', '-o', 'yaml');
    expect(y.code, y.stderr).toBe(0);
    const svc = parseYaml(y.stdout) as { spec: { ports: Record<string, unknown>[]; selector: Record<string, string>; type: string } };
    expect(svc.spec.type).toBe('ClusterIP');
    expect(svc.spec.selector).toEqual({ app: 'web' });
    expect(svc.spec.ports).toEqual([{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }]);

    const ry = await kubectl('-n', 'typed', 'get', 'role', 'pod-reader', '-o', 'yaml');
    expect(parseYaml(ry.stdout)).toMatchObject({ kind: 'Role', rules: [{ verbs: ['get', 'list'] }] });
  });

  it('create clusterrole and clusterrolebinding; create token; auth whoami', async () => {
    let r = await kubectl('create', 'clusterrole', 'cm-lister', '--verb=list', '--resource=configmaps');
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('create', 'clusterrolebinding', 'cm-listers', '--clusterrole=cm-lister', '--group=devs');
    expect(r.code, r.stderr).toBe(0);
    expect((await getJson('clusterrolebinding', 'cm-listers')).subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'devs' }]);

    r = await kubectl('-n', 'typed', 'create', 'token', 'robot', '--duration=20m');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('.')).toHaveLength(3);

    r = await kubectl('auth', 'whoami', '-o', 'json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'SelfSubjectReview', status: { userInfo: { username: expect.any(String) } } });
  });

  // kubectl reads the CSR and writes the approval sub-resource in protobuf: the condition's status is
  // field 6 of CertificateSigningRequestCondition (the others 1-5); conditions used to have no protobuf
  // form and the approval was dropped.
  it('certificate approve records the Approved condition', async () => {
    const file = join(cacheDir, 'csr.json');
    await writeFile(file, JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr1' },
      spec: { request: SAMPLE_CSR_REQUEST, signerName: 'example.com/signer', usages: ['client auth'] },
    }));
    let r = await kubectl('create', '-f', file);
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('certificate', 'approve', 'csr1');
    expect(r.code, r.stderr).toBe(0);
    const csr = await getJson('csr', 'csr1');
    expect((csr.status as { conditions?: unknown[] }).conditions).toEqual([
      expect.objectContaining({ type: 'Approved', status: 'True', reason: 'KubectlApprove', lastUpdateTime: expect.any(String) }),
    ]);
  });

  // kubectl debug creates the pod through the typed client: protobuf always carries Go's non-pointer
  // bools, and kube's JSON omits the false ones (omitempty), so the baseline profile's hostIPC: false is absent
  it('kubectl debug node --profile baseline: the false host namespaces and stdin are absent, as in kube', async () => {
    const node = join(cacheDir, 'node.json');
    await writeFile(node, JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'dbg-node' } }));
    expect((await kubectl('create', '-f', node)).code).toBe(0);
    const r = await kubectl('debug', '--profile', 'baseline', 'node/dbg-node', '--image=busybox', '--attach=false', '-n', 'default', '--', 'true');
    expect(r.code, r.stderr).toBe(0);
    const name = /pod (\S+)/.exec(r.stdout)?.[1] ?? '';
    const pod = await getJson('pod', name, '-n', 'default');
    const spec = pod.spec as Record<string, unknown>;
    expect(spec.nodeName).toBe('dbg-node');
    expect(spec).not.toHaveProperty('hostIPC');
    expect(spec).not.toHaveProperty('hostNetwork');
    expect(spec).not.toHaveProperty('hostPID');
    const container = (spec.containers as Record<string, unknown>[])[0]!;
    expect(container).not.toHaveProperty('stdin');
    expect(container).not.toHaveProperty('tty');
  });

  // What `--dry-run=client -o json` prints is the object kubectl then sends as protobuf; the server must
  // store exactly that (an Ingress's rules used to decode with the paths' bytes as the path: its
  // `http` lies in the Go-inlined IngressRuleValue, field 2, where it is field 1).
  it.each([
    ['ingress', ['ingress', 'ing1', '--rule=foo.com/bar=web:80', '--rule=bar.com/*=svc2:http,tls=my-cert', '--default-backend=defsvc:8080', '--class=nginx']],
    ['deployment', ['deployment', 'd1', '--image=nginx', '--replicas=2', '--port=8080']],
    ['job', ['job', 'j1', '--image=busybox', '--', 'echo', 'hi']],
    ['cronjob', ['cronjob', 'cj1', '--image=busybox', '--schedule=*/5 * * * *', '--restart=OnFailure', '--', 'date']],
    ['service nodeport', ['service', 'nodeport', 's2', '--tcp=80:8080', '--node-port=30080']],
    ['service externalname', ['service', 'externalname', 's4', '--external-name=example.com']],
    ['quota', ['quota', 'q1', '--hard=cpu=1,memory=1G,pods=2', '--scopes=NotBestEffort']],
    ['priorityclass', ['priorityclass', 'pc1', '--value=1000', '--description=high', '--preemption-policy=Never']],
    ['poddisruptionbudget', ['poddisruptionbudget', 'pdb1', '--selector=app=x', '--min-available=50%']],
    ['secret docker-registry', ['secret', 'docker-registry', 'ds1', '--docker-server=r.io', '--docker-username=u', '--docker-password=p']],
  ])('create %s stores what kubectl sent', async (_what, args) => {
    const dash = args.indexOf('--');
    const withFlags = (extra: string[]) => (dash < 0 ? [...args, ...extra] : [...args.slice(0, dash), ...extra, ...args.slice(dash)]);
    const namespaced = args[0] !== 'priorityclass';
    const ns = namespaced ? ['-n', 'typed'] : [];
    const dry = await kubectl('create', ...withFlags([...ns, '--dry-run=client', '-o', 'json']));
    expect(dry.code, dry.stderr).toBe(0);
    const sent = JSON.parse(dry.stdout) as { apiVersion: string; kind: string; metadata: { name: string; creationTimestamp?: unknown }; status?: unknown };
    const r = await kubectl('create', ...withFlags(ns));
    expect(r.code, r.stderr).toBe(0);
    const group = sent.apiVersion.includes('/') ? `.${sent.apiVersion.split('/')[0]}` : '';
    const stored = await getJson(...ns, `${sent.kind.toLowerCase()}${group}`, sent.metadata.name);
    delete sent.status;
    delete sent.metadata.creationTimestamp;
    expect(stored).toMatchObject(withoutEmpty(sent) as Record<string, unknown>);
  });
});

/** kubectl's dry-run output keeps empty objects and lists a protobuf round trip leaves out */
function withoutEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmpty);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || (typeof x === 'object' && Object.keys(x).length === 0)) continue;
    out[k] = withoutEmpty(x);
  }
  return out;
}
