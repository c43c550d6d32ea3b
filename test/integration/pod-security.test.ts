// The PodSecurity admission plugin on a real server (docs/admission.md
// "PodSecurity"): enforce refuses with kube's 403, warn answers with kube's
// Warning header (pods and workload templates), namespace label changes
// warn about existing pods, bad label values are 422, and without labels
// (or at privileged) everything is admitted.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_WORKLOAD_CONTROLLERS, type RawResponse, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

const namespace = async (name: string, labels: Record<string, string> = {}) => {
  const r = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } } });
  expect(r.status, r.text).toBe(201);
  await eventually(async () => (await t.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200, 'default account');
};
const setLabels = (name: string, labels: Record<string, string | null>) =>
  t.request('PATCH', `/api/v1/namespaces/${name}`, { body: { metadata: { labels } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1' }], ...spec } });
const restrictedPod = (name: string) => pod(name, {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'c', image: 'busybox:1', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
});
/** the Warning headers' texts (`299 - "<text>"`) */
const warnings = (r: RawResponse): string[] => {
  const h = r.headers.warning;
  const list = h === undefined ? [] : Array.isArray(h) ? h : h.split(/,(?=\s*299 )/);
  return list.map((w) => JSON.parse(w.trim().replace(/^299 - /, '')) as string);
};

const RESTRICTED_DETAIL = 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
  + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
  + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
  + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

describe('PodSecurity', () => {
  it('admits anything in a namespace without labels (privileged by default)', async () => {
    await namespace('psa-none');
    const r = await t.request('POST', '/api/v1/namespaces/psa-none/pods', { body: pod('host', { hostNetwork: true, containers: [{ name: 'c', image: 'busybox:1', securityContext: { privileged: true } }] }) });
    expect(r.status, r.text).toBe(201);
    expect(warnings(r)).toEqual([]);
    const hp = await t.request('POST', '/api/v1/namespaces/psa-none/pods', { body: pod('hp', { hostNetwork: true, containers: [{ name: 'c', image: 'busybox:1', ports: [{ containerPort: 8080 }] }] }) });
    expect(hp.status, hp.text).toBe(201);
    expect(hp.json<{ spec: { containers: { ports: unknown[] }[] } }>().spec.containers[0]!.ports).toEqual([{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }]);
  });

  it('admits anything at the privileged level', async () => {
    await namespace('psa-priv', { 'pod-security.kubernetes.io/enforce': 'privileged', 'pod-security.kubernetes.io/warn': 'privileged' });
    const r = await t.request('POST', '/api/v1/namespaces/psa-priv/pods', { body: pod('host', { hostPID: true }) });
    expect(r.status, r.text).toBe(201);
    expect(warnings(r)).toEqual([]);
  });

  it('refuses a violating pod under enforce with kube\'s 403 message', async () => {
    await namespace('psa-enforce', { 'pod-security.kubernetes.io/enforce': 'restricted' });
    const r = await t.request('POST', '/api/v1/namespaces/psa-enforce/pods', { body: pod('x') });
    expect(r.status, r.text).toBe(403);
    const status = r.json<{ reason: string; message: string; details: { name: string; kind: string } }>();
    expect(status.reason).toBe('Forbidden');
    expect(status.message).toBe(`pods "x" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`);
    expect(status.details).toMatchObject({ name: 'x', kind: 'pods' });
    const ok = await t.request('POST', '/api/v1/namespaces/psa-enforce/pods', { body: restrictedPod('y') });
    expect(ok.status, ok.text).toBe(201);
    // an update that only changes labels is not evaluated again; a new image is
    const labelsOnly = await t.request('PATCH', '/api/v1/namespaces/psa-enforce/pods/y', { body: { metadata: { labels: { a: 'b' } } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(labelsOnly.status, labelsOnly.text).toBe(200);
    // an ephemeral container added through its sub-resource is held to the level too
    const debug = await t.request('PATCH', '/api/v1/namespaces/psa-enforce/pods/y/ephemeralcontainers', {
      body: [{ op: 'add', path: '/spec/ephemeralContainers', value: [{ name: 'dbg', image: 'busybox:1', securityContext: { privileged: true } }] }],
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(debug.status, debug.text).toBe(403);
    expect(debug.json<{ message: string }>().message).toMatch(/^pods "y" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "dbg" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false \(container "dbg"/);
  });

  it('evaluates enforce at the labelled version', async () => {
    await namespace('psa-version', { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.24' });
    const r = await t.request('POST', '/api/v1/namespaces/psa-version/pods', { body: pod('x', { hostIPC: true }) });
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string }>().message).toMatch(/^pods "x" is forbidden: violates PodSecurity "restricted:v1.24": host namespaces \(hostIPC=true\), allowPrivilegeEscalation != false/);
  });

  it('warns under warn, for pods and for workload templates, without refusing', async () => {
    await namespace('psa-warn', { 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/enforce': 'baseline' });
    const r = await t.request('POST', '/api/v1/namespaces/psa-warn/pods', { body: pod('x') });
    expect(r.status, r.text).toBe(201);
    expect(warnings(r)).toEqual([`would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`]);
    const deploy = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
      spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { hostNetwork: true, containers: [{ name: 'c', image: 'busybox:1' }] } } },
    };
    const d = await t.request('POST', '/apis/apps/v1/namespaces/psa-warn/deployments', { body: deploy });
    expect(d.status, d.text).toBe(201);
    expect(warnings(d)).toEqual([`would violate PodSecurity "restricted:latest": host namespaces (hostNetwork=true), ${RESTRICTED_DETAIL}`]);
    // workload kinds are never enforced: baseline would refuse hostNetwork in a pod
    const p = await t.request('POST', '/api/v1/namespaces/psa-warn/pods', { body: pod('h', { hostNetwork: true }) });
    expect(p.status).toBe(403);
    expect(p.json<{ message: string }>().message).toBe('pods "h" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
    expect(warnings(p)).toEqual([]);
    // a host-network pod's container ports default to host ports (kube's SetDefaults_Pod), which baseline refuses too
    const hp = await t.request('POST', '/api/v1/namespaces/psa-warn/pods', { body: pod('hp', { hostNetwork: true, containers: [{ name: 'c', image: 'busybox:1', ports: [{ containerPort: 8080 }] }] }) });
    expect(hp.status).toBe(403);
    expect(hp.json<{ message: string }>().message).toBe('pods "hp" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), hostPort (container "c" uses hostPort 8080)');
  });

  it('warns about existing pods when a namespace\'s enforce level gets stricter', async () => {
    await namespace('psa-existing');
    for (const name of ['b', 'a']) {
      const r = await t.request('POST', '/api/v1/namespaces/psa-existing/pods', { body: pod(name, { hostNetwork: true }) });
      expect(r.status, r.text).toBe(201);
    }
    const priv = await t.request('POST', '/api/v1/namespaces/psa-existing/pods', { body: pod('p', { containers: [{ name: 'c', image: 'busybox:1', securityContext: { privileged: true } }] }) });
    expect(priv.status, priv.text).toBe(201);
    const r = await setLabels('psa-existing', { 'pod-security.kubernetes.io/enforce': 'baseline' });
    expect(r.status, r.text).toBe(200);
    expect(warnings(r)).toEqual([
      'existing pods in namespace "psa-existing" violate the new PodSecurity enforce level "baseline:latest"',
      'a (and 1 other pod): host namespaces',
      'p: privileged',
    ]);
    // relaxing the level (same version) checks nothing
    const relaxed = await setLabels('psa-existing', { 'pod-security.kubernetes.io/enforce': 'privileged' });
    expect(relaxed.status, relaxed.text).toBe(200);
    expect(warnings(relaxed)).toEqual([]);
  });

  it('evaluates a pod update that changes an image, not one that changes labels', async () => {
    await namespace('psa-update');
    const r = await t.request('POST', '/api/v1/namespaces/psa-update/pods', { body: pod('x', { hostNetwork: true }) });
    expect(r.status, r.text).toBe(201);
    expect((await setLabels('psa-update', { 'pod-security.kubernetes.io/enforce': 'baseline' })).status).toBe(200);
    const patch = (path: string, value: unknown) => t.request('PATCH', '/api/v1/namespaces/psa-update/pods/x', { body: [{ op: 'add', path, value }], headers: { 'Content-Type': 'application/json-patch+json' } });
    expect((await patch('/metadata/labels', { a: 'b' })).status).toBe(200);
    const image = await patch('/spec/containers/0/image', 'busybox:2');
    expect(image.status, image.text).toBe(403);
    expect(image.json<{ message: string }>().message).toBe('pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
  });

  it('shows kubectl users the warnings and the refusal as kube does', async () => {
    await namespace('psa-kubectl');
    const cfg = t.server.kubeconfigPath;
    const label = await runKubectl(cfg, ['label', 'ns', 'psa-kubectl', 'pod-security.kubernetes.io/warn=baseline']);
    expect(label.code, label.stderr).toBe(0);
    const run = await runKubectl(cfg, ['run', 'w', '-n', 'psa-kubectl', '--image=busybox:1', '--overrides={"spec":{"hostIPC":true}}']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('Warning: would violate PodSecurity "baseline:latest": host namespaces (hostIPC=true)');
    const enforce = await runKubectl(cfg, ['label', 'ns', 'psa-kubectl', 'pod-security.kubernetes.io/enforce=baseline']);
    expect(enforce.code, enforce.stderr).toBe(0);
    expect(enforce.stderr).toContain('Warning: existing pods in namespace "psa-kubectl" violate the new PodSecurity enforce level "baseline:latest"');
    expect(enforce.stderr).toContain('Warning: w: host namespaces');
    const refused = await runKubectl(cfg, ['run', 'r', '-n', 'psa-kubectl', '--image=busybox:1', '--overrides={"spec":{"hostIPC":true}}']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Error from server (Forbidden): pods "r" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostIPC=true)');
  });

  it('refuses invalid label values with kube\'s 422', async () => {
    const r = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'psa-bad', labels: { 'pod-security.kubernetes.io/enforce': 'foo' } } } });
    expect(r.status, r.text).toBe(422);
    const status = r.json<{ reason: string; message: string }>();
    expect(status.reason).toBe('Invalid');
    expect(status.message).toBe('Namespace "psa-bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "foo": must be one of privileged, baseline, restricted');
    await namespace('psa-bad2');
    const u = await setLabels('psa-bad2', { 'pod-security.kubernetes.io/warn-version': 'v2' });
    expect(u.status, u.text).toBe(422);
    expect(u.json<{ message: string }>().message).toBe('Namespace "psa-bad2" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "v2": must be "latest" or "v1.x"');
  });
});

describe('PodSecurity disabled', () => {
  it('is off with --disable-admission-plugins PodSecurity', async () => {
    const off = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS, admissionPlugins: { disable: ['PodSecurity'] } });
    try {
      const ns = await off.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'psa-off', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
      expect(ns.status, ns.text).toBe(201);
      await eventually(async () => (await off.request('GET', '/api/v1/namespaces/psa-off/serviceaccounts/default')).status === 200, 'default account');
      const r = await off.request('POST', '/api/v1/namespaces/psa-off/pods', { body: pod('x') });
      expect(r.status, r.text).toBe(201);
    } finally {
      await off.stop();
    }
  });
});

describe('PodSecurity audit', () => {
  it('annotates the audit event with the audit level\'s violations and the enforced policy', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-psa-audit-'));
    const logPath = join(dir, 'audit.log');
    await writeFile(join(dir, 'policy.yaml'), 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
    const a = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS, audit: { policyFile: join(dir, 'policy.yaml'), logPath } });
    try {
      const ns = await a.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'psa-audit', labels: { 'pod-security.kubernetes.io/audit': 'baseline' } } } });
      expect(ns.status, ns.text).toBe(201);
      await eventually(async () => (await a.request('GET', '/api/v1/namespaces/psa-audit/serviceaccounts/default')).status === 200, 'default account');
      const r = await a.request('POST', '/api/v1/namespaces/psa-audit/pods', { body: pod('x', { hostPID: true }) });
      expect(r.status, r.text).toBe(201);
      const id = r.headers['audit-id'] as string;
      let annotations: Record<string, string> | undefined;
      await eventually(async () => {
        const lines = (await readFile(logPath, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
        const ev = lines.map((l) => JSON.parse(l) as { auditID: string; stage: string; annotations?: Record<string, string> }).find((e) => e.auditID === id && e.stage === 'ResponseComplete');
        annotations = ev?.annotations;
        return ev !== undefined;
      }, 'audit event of the pod create');
      expect(annotations).toMatchObject({
        'pod-security.kubernetes.io/enforce-policy': 'privileged:latest',
        'pod-security.kubernetes.io/audit-violations': 'would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)',
      });
    } finally {
      await a.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
