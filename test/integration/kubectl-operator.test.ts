// What an operator sees with kubectl 1.32 beyond create/get/apply (the second
// kubectl sweep): `kubectl set resources|serviceaccount` on a Deployment's
// template, pods whose limits imply requests, and CertificateSigningRequests
// through `kubectl get csr` and `kubectl certificate approve|deny`. Real
// kubectl against a real server with `--api-domain k8s.io` (kubectl's typed
// generators use the Kubernetes groups).

import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';

const exec = promisify(execFile);

let t: TestServer;
let dir: string;
type Obj = Record<string, any>;

const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

async function getJson(...args: string[]): Promise<Obj> {
  const r = await kubectl('get', ...args, '-o', 'json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Obj;
}

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
  dir = await mkdtemp(join(tmpdir(), 'orch-kubectl-operator-'));
});
afterAll(async () => {
  await t?.stop();
});

describe('kubectl set on a Deployment template', () => {
  it('set resources with a request above its limit is kube\'s 422 naming the field; nothing changes', async () => {
    let r = await kubectl('create', 'deployment', 'res', '--image=nginx:1.27');
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('set', 'resources', 'deployment/res', '--requests=cpu=1', '--limits=cpu=500m');
    expect(r.code).toBe(1);
    // kubectl prints the Status message after its own prefix
    expect(r.stderr).toContain('error: failed to patch resources update to pod template Deployment.apps "res" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m');
    expect((await getJson('deployment', 'res')).spec.template.spec.containers[0].resources).toEqual({});
    r = await kubectl('set', 'resources', 'deployment/res', '--requests=cpu=100m', '--limits=cpu=0.5,memory=64Mi');
    expect(r.code, r.stderr).toBe(0);
    expect((await getJson('deployment', 'res')).spec.template.spec.containers[0].resources).toEqual({ limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m' } });
  });

  it('set serviceaccount shows the name under both serviceAccountName and its deprecated alias serviceAccount', async () => {
    let r = await kubectl('create', 'deployment', 'sa', '--image=nginx:1.27');
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('set', 'serviceaccount', 'deployment/sa', 'builder');
    expect(r.code, r.stderr).toBe(0);
    let spec = (await getJson('deployment', 'sa')).spec.template.spec;
    expect([spec.serviceAccountName, spec.serviceAccount]).toEqual(['builder', 'builder']);
    // a strategic merge of the name alone moves the alias with it
    r = await kubectl('patch', 'deployment', 'sa', '-p', '{"spec":{"template":{"spec":{"serviceAccountName":"other"}}}}');
    expect(r.code, r.stderr).toBe(0);
    spec = (await getJson('deployment', 'sa')).spec.template.spec;
    expect([spec.serviceAccountName, spec.serviceAccount]).toEqual(['other', 'other']);
  });
});

describe('pods', () => {
  it('a limit without a request requests the limit; serviceAccount alone names the account', async () => {
    const f = join(dir, 'pod.yaml');
    await writeFile(f, [
      'apiVersion: v1', 'kind: Pod', 'metadata: {name: lim}', 'spec:', '  serviceAccount: robot', '  containers:',
      '  - {name: c, image: busybox, resources: {limits: {cpu: 250m, memory: 32Mi}, requests: {cpu: 100m}}}', '',
    ].join('\n'));
    // the ServiceAccount admission plugin wants the account to exist
    expect((await kubectl('create', 'serviceaccount', 'robot')).code).toBe(0);
    const r = await kubectl('create', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    const pod = await getJson('pod', 'lim');
    expect(pod.spec.containers[0].resources).toEqual({ limits: { cpu: '250m', memory: '32Mi' }, requests: { cpu: '100m', memory: '32Mi' } });
    expect([pod.spec.serviceAccountName, pod.spec.serviceAccount]).toEqual(['robot', 'robot']);
    expect(pod.status.qosClass).toBe('Burstable');
  });

  it('a negative request is refused', async () => {
    const r = await kubectl('run', 'neg', '--image=busybox', '--overrides={"spec":{"containers":[{"name":"neg","image":"busybox","resources":{"requests":{"memory":"-1Mi"}}}]}}');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('The Pod "neg" is invalid: spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0');
  });
});

describe('CertificateSigningRequests', () => {
  async function csr(name: string): Promise<string> {
    const key = join(dir, `${name}.key`);
    const req = join(dir, `${name}.csr`);
    await exec('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-subj', `/CN=${name}/O=devs`, '-out', req]);
    const { stdout } = await exec('base64', ['-w0', req]);
    const f = join(dir, `${name}.yaml`);
    await writeFile(f, [
      'apiVersion: certificates.k8s.io/v1', 'kind: CertificateSigningRequest', `metadata: {name: ${name}}`, 'spec:', `  request: ${stdout}`,
      '  signerName: kubernetes.io/kube-apiserver-client', '  expirationSeconds: 86400', '  usages: [client auth]',
      // whatever the body says, the server records who asked
      '  username: someone-else', '  groups: [system:masters]', '',
    ].join('\n'));
    return f;
  }

  it('records the requester, prints kube\'s columns and follows approve and deny', async () => {
    for (const n of ['alice', 'bob']) {
      const r = await kubectl('create', '-f', await csr(n));
      expect(r.code, r.stderr).toBe(0);
    }
    const whoami = await kubectl('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}');
    expect(whoami.code, whoami.stderr).toBe(0);
    const spec = (await getJson('csr', 'alice')).spec;
    expect(spec.username).toBe(whoami.stdout);
    expect(spec.groups).toContain('system:masters');
    expect(spec.groups).toContain('system:authenticated');

    expect((await kubectl('certificate', 'approve', 'alice')).code).toBe(0);
    expect((await kubectl('certificate', 'deny', 'bob')).code).toBe(0);
    // the csrsigning controller signs alice's request for the built-in client signer
    for (let i = 0; i < 200 && !(await getJson('csr', 'alice')).status?.certificate; i++) await new Promise((res) => setTimeout(res, 50));
    const r = await kubectl('get', 'csr');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(lines[0]).toEqual(['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    const row = (n: string) => lines.find((l) => l[0] === n)!;
    expect(row('alice').slice(2)).toEqual(['kubernetes.io/kube-apiserver-client', whoami.stdout, '24h', 'Approved,Issued']);
    expect(row('bob').slice(2)).toEqual(['kubernetes.io/kube-apiserver-client', whoami.stdout, '24h', 'Denied']);
  });
});
