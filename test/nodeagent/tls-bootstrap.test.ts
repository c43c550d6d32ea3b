// TLS bootstrapping (spec 001 §5.4, spec 002 §4.2): a real `orch nodeagent`
// given only a bootstrap-token kubeconfig (made by `orch bootstrap-kubeconfig`'s
// function) requests its client certificate, has it auto-approved and signed
// by the control plane's controllers, writes its kubeconfig and cert-dir
// files, and runs as system:node:<name> until its Node is Ready; a restart
// keeps the bootstrapped kubeconfig. Certificate rotation renews the
// certificate as the node itself (selfnodeclient).

import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBootstrapKubeconfig } from '../../src/cli/bootstrap-kubeconfig.js';
import { ApiClient } from '../../src/nodeagent/api-client.js';
import { ClientCertificateRotation } from '../../src/nodeagent/cert-rotation.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { readKubeconfig } from '../../src/nodeagent/kubeconfig.js';
import { CURRENT_PEM, bootstrapKubeconfig } from '../../src/nodeagent/tls-bootstrap.js';
import { type AgentProcess, startAgentProcess, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { renderKubeconfig } from '../../src/server/kubeconfig.js';

let ts: TestServer;
let dir: string;
let bootFile: string;
const agents: AgentProcess[] = [];
const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests';
type Csr = { metadata: { name: string }; spec: { username: string; signerName: string }; status: { certificate?: string; conditions?: { type: string; reason: string; message: string }[] } };
const csrs = async () => (await ts.request('GET', CSRS)).json<{ items: Csr[] }>().items;

beforeAll(async () => {
  ts = await startTestServer({ authn: { enableBootstrapTokenAuth: true } });
  dir = await mkdtemp(join(tmpdir(), 'orch-boot-'));
  bootFile = join(dir, 'bootstrap.kubeconfig');
  await createBootstrapKubeconfig({ adminKubeconfig: ts.server.kubeconfigPath, out: bootFile, ttlMs: 3600_000 });
});
afterAll(async () => {
  for (const a of agents) await a.stop();
  await ts?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('nodeagent --bootstrap-kubeconfig', () => {
  it('joins with only a bootstrap token and ends with its Node Ready', async () => {
    const boot = await readKubeconfig(bootFile);
    expect(boot.token).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    expect(boot.certPem).toBeUndefined();
    const kubeconfig = join(dir, 'agent', 'nodeagent.kubeconfig');
    const certDir = join(dir, 'agent', 'pki');
    const start = () => startAgentProcess(ts, { nodeName: 'boot-a', kubeconfig: false, dir: join(dir, 'agent'), extraArgs: ['--bootstrap-kubeconfig', bootFile, '--kubeconfig', kubeconfig, '--cert-dir', certDir] });
    let agent = await start();
    agents.push(agent);
    await waitNodeReady(ts, agent, 'boot-a');

    // the request: from the bootstrap identity, auto-approved, issued
    const [csr, ...others] = await csrs();
    expect(others).toEqual([]);
    expect(csr!.metadata.name).toMatch(/^node-csr-/);
    expect(csr!.spec.username).toBe(`system:bootstrap:${boot.token!.slice(0, 6)}`);
    expect(csr!.spec.signerName).toBe('orch.io/orch-apiserver-client-kubelet');
    expect(csr!.status.conditions).toEqual([expect.objectContaining({ type: 'Approved', reason: 'AutoApproved' })]);

    // the files: a kubeconfig pointing at <cert-dir>/nodeagent-client-current.pem, the issued certificate and its key
    const doc = parseYaml(await readFile(kubeconfig, 'utf8')) as { users: { user: Record<string, string> }[] };
    expect(doc.users[0]!.user).toEqual({ 'client-certificate': join(certDir, CURRENT_PEM), 'client-key': join(certDir, CURRENT_PEM) });
    expect(await readlink(join(certDir, CURRENT_PEM))).toMatch(/nodeagent-client-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.pem$/);
    const creds = await readKubeconfig(kubeconfig);
    const cert = new X509Certificate(creds.certPem!);
    expect(cert.subject).toBe('CN=system:node:boot-a\nO=system:nodes');
    expect(cert.checkIssued(new X509Certificate(ts.server.caPem))).toBe(true);
    expect(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(creds.keyPem!))).toBe(true);
    expect(Buffer.from(csr!.status.certificate!, 'base64').toString()).toBe(creds.certPem!.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n/)![0]);

    // the agent acts as system:node:boot-a: its Node's status was written by it
    const node = (await ts.request('GET', '/api/v1/nodes/boot-a')).json<{ metadata: { managedFields: { manager: string; subresource?: string }[] } }>();
    expect(node.metadata.managedFields.some((f) => f.manager === 'nodeagent' && f.subresource === 'status')).toBe(true);

    // a restart keeps the bootstrapped kubeconfig: no second request
    await agent.stop();
    agent = await start();
    agents.push(agent);
    await waitNodeReady(ts, agent, 'boot-a');
    expect((await csrs()).length).toBe(1);
  }, 150_000);

  it('--rotate-certificates renews the client certificate as the node itself', async () => {
    const kubeconfig = join(dir, 'rot', 'nodeagent.kubeconfig');
    const certDir = join(dir, 'rot', 'pki');
    const log = () => {};
    await bootstrapKubeconfig({ kubeconfig, bootstrapKubeconfig: bootFile, certDir, nodeName: 'rot-b', domain: 'orch.io', clock: realClock(0), log, pollMs: 50 });
    const creds = await readKubeconfig(kubeconfig);
    const first = new X509Certificate(creds.certPem!);
    const api = new ApiClient(creds);
    const whoami = async () => (await api.create<{ status: { userInfo: { username: string } } }>('/apis/authentication.orch.io/v1/selfsubjectreviews', { kind: 'SelfSubjectReview', apiVersion: 'authentication.orch.io/v1' })).status.userInfo.username;
    expect(await whoami()).toBe('system:node:rot-b');
    const firstFile = await readlink(join(certDir, CURRENT_PEM));
    // a clock at 95 % of the certificate's lifetime: the rotation is due at once
    const lifetime = Date.parse(first.validTo) - Date.parse(first.validFrom);
    let rotated: string | undefined;
    const rotation = new ClientCertificateRotation({ api, certDir, nodeName: 'rot-b', domain: 'orch.io', clock: realClock(lifetime * 0.95), log, pollMs: 50, onRotated: (pem) => {
      rotated = pem;
      rotation.stop();
    } });
    rotation.start(creds.certPem!);
    for (let i = 0; i < 200 && !rotated; i++) await new Promise((r) => setTimeout(r, 50));
    expect(rotated).toBeDefined();
    const second = new X509Certificate(rotated!);
    expect(second.serialNumber).not.toBe(first.serialNumber);
    expect(second.subject).toBe(first.subject);
    expect(second.publicKey.export({ type: 'spki', format: 'der' }).equals(first.publicKey.export({ type: 'spki', format: 'der' }))).toBe(false);
    expect(await readlink(join(certDir, CURRENT_PEM))).not.toBe(firstFile);
    // the renewal was asked by the node and approved through selfnodeclient; the client now uses it
    const renewal = (await csrs()).find((c) => c.spec.username === 'system:node:rot-b');
    expect(renewal?.status.conditions?.[0]).toMatchObject({ reason: 'AutoApproved', message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' });
    expect(await whoami()).toBe('system:node:rot-b');
    const onDisk = await readKubeconfig(kubeconfig);
    expect(new X509Certificate(onDisk.certPem!).serialNumber).toBe(second.serialNumber);
    api.close();
  });
});

describe('a refused request', () => {
  it('a denied request stops the bootstrap and drops the pending key, so the next start asks anew', async () => {
    // a token whose group may create requests but is not auto-approved
    const secret = await ts.request('POST', '/api/v1/namespaces/orch-system/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bootstrap-token-denyme' }, type: 'bootstrap.orch.io/token', stringData: { 'token-id': 'denyme', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:manual' } },
    });
    expect(secret.status, secret.text).toBe(201);
    const binding = await ts.request('POST', '/apis/rbac.authorization.orch.io/v1/clusterrolebindings', {
      body: { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'manual-csr' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'system:node-bootstrapper' }, subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.orch.io', name: 'system:bootstrappers:manual' }] },
    });
    expect(binding.status, binding.text).toBe(201);
    const manual = join(dir, 'manual.kubeconfig');
    await writeFile(manual, renderKubeconfig({ server: ts.server.url, caPem: ts.server.caPem, token: 'denyme.0123456789abcdef' }));
    const certDir = join(dir, 'denied', 'pki');
    const boot = bootstrapKubeconfig({ kubeconfig: join(dir, 'denied', 'node.kubeconfig'), bootstrapKubeconfig: manual, certDir, nodeName: 'denied-c', domain: 'orch.io', clock: realClock(0), log: () => {}, pollMs: 50 });
    const outcome = boot.then(() => 'issued', (e: Error) => e.message);
    const csr = await eventually(async () => (await csrs()).find((c) => c.spec.username === 'system:bootstrap:denyme'), 'the request');
    expect(csr.status.conditions ?? []).toEqual([]);
    await stat(join(certDir, 'nodeagent-client.key.tmp'));
    const denied = await ts.request('PUT', `${CSRS}/${csr.metadata.name}/approval`, { body: { ...csr, status: { conditions: [{ type: 'Denied', status: 'True', reason: 'Nope', message: 'not this one' }] } } });
    expect(denied.status, denied.text).toBe(200);
    expect(await outcome).toMatch(/is denied, reason: Nope, message: not this one$/);
    await expect(stat(join(certDir, 'nodeagent-client.key.tmp'))).rejects.toThrow(/ENOENT/);
  });
});

/** real timers, `now` shifted by `offset` ms (the rotation deadline without waiting months) */
function realClock(offset: number): Clock {
  return {
    now: () => Date.now() + offset,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
  };
}
