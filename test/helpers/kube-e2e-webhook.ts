// Shared steps of the ports of Kubernetes' admission webhook e2e tests
// (test/e2e/apimachinery/webhook.go → test/integration/e2e-apimachinery-webhook*.test.ts):
// the webhook server (agnhost's paths, agnhost-webhook.ts) reached through a
// Service reference, a labelled namespace per test with its markers
// namespace, kube's webhook fixtures and the "is the configuration in force"
// marker probe.
//
// One difference from kube: the webhook's Service lives in one namespace for
// the whole file (its serving certificate must name `<service>.<namespace>.svc`,
// made once), not in each test's namespace.

import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdmissionWebhook, startAdmissionWebhook } from './admission-webhook.js';
import { serveAgnhost } from './agnhost-webhook.js';
import { eventually } from './eventually.js';
import { type Obj, type TestServer, call, newNamespace, useKubeServer } from './kube-e2e.js';

export const AR = '/apis/admissionregistration.k8s.io/v1';
export const VWC = `${AR}/validatingwebhookconfigurations`;
export const MWC = `${AR}/mutatingwebhookconfigurations`;
export const SERVICE = 'e2e-test-webhook';
export const SERVICE_NS = 'e2e-webhook-service';
const SERVICE_PORT = 8443;

/** what the e2e framework gives each test: its namespace (also its unique name) and the markers namespace */
export interface WebhookTestEnv {
  t: TestServer;
  hook: AdmissionWebhook;
  ns: string;
  unique: string;
  markers: string;
}

export async function labelNamespace(t: TestServer, ns: string, labels: Record<string, string>): Promise<void> {
  await call(t, 'PATCH', `/api/v1/namespaces/${ns}`, { metadata: { labels } }, 'application/strategic-merge-patch+json');
}

/** f.CreateNamespace with labels */
export async function labelledNamespace(t: TestServer, base: string, labels: Record<string, string>): Promise<string> {
  const ns = await newNamespace(t, base);
  await labelNamespace(t, ns, labels);
  return ns;
}

/**
 * one server and one webhook for a test file, and before each test a fresh environment
 * (kube's BeforeEach: the namespace labelled with its unique name, the markers namespace);
 * webhook configurations are removed after each test, as kube's DeferCleanup does
 */
export function useWebhookEnv(): () => WebhookTestEnv {
  let t: TestServer;
  let hook: AdmissionWebhook;
  let dir: string;
  let env: WebhookTestEnv | undefined;
  useKubeServer((s) => (t = s));
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-e2e-webhook-'));
    hook = await startAdmissionWebhook(dir, [`${SERVICE}.${SERVICE_NS}.svc`]);
    serveAgnhost(hook);
    await exposeWebhookService(t, hook, { namespace: SERVICE_NS, name: SERVICE, port: SERVICE_PORT, targetPort: 8444, labels: { test: 'webhook' } });
  });
  afterAll(async () => {
    await hook?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    env = await setUp(t, hook);
  });
  afterEach(async () => {
    env = undefined;
    await t.request('DELETE', VWC);
    await t.request('DELETE', MWC);
    hook.seen.length = 0;
  });
  return () => {
    if (!env) throw new Error('only inside a test');
    return env;
  };
}

/**
 * the namespace, a Service and its Endpoints leading to the in-process webhook (kube deploys it
 * as a pod behind the Service); no selector: the endpoints are the webhook's loopback address
 */
export async function exposeWebhookService(
  t: TestServer,
  hook: AdmissionWebhook,
  s: { namespace: string; name: string; port: number; targetPort: number; labels: Record<string, string> },
): Promise<void> {
  await call(t, 'POST', '/api/v1/namespaces', { metadata: { name: s.namespace } });
  await call(t, 'POST', `/api/v1/namespaces/${s.namespace}/services`, {
    metadata: { name: s.name, labels: s.labels },
    spec: { ports: [{ protocol: 'TCP', port: s.port, targetPort: s.targetPort }] },
  });
  await call(t, 'POST', `/api/v1/namespaces/${s.namespace}/endpoints`, {
    metadata: { name: s.name },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: hook.port, protocol: 'TCP' }] }],
  });
}

/** kube's BeforeEach: labelNamespace and createWebhookConfigurationReadyNamespace */
async function setUp(t: TestServer, hook: AdmissionWebhook): Promise<WebhookTestEnv> {
  const ns = await newNamespace(t, 'webhook');
  await labelNamespace(t, ns, { [ns]: 'true' });
  const markers = await labelledNamespace(t, 'webhook-markers', { [`${ns}-markers`]: 'true' });
  return { t, hook, ns, unique: ns, markers };
}

/** a Service reference to the webhook at `path`; `ca` false: no caBundle, so the call always fails */
export function serviceRef(e: WebhookTestEnv, path: string, ca = true): Obj {
  return { service: { namespace: SERVICE_NS, name: SERVICE, path, port: SERVICE_PORT }, ...(ca ? { caBundle: e.hook.caBundle } : {}) };
}

const rule = (operations: string[], apiGroups: string[], apiVersions: string[], resources: string[]): Obj => ({ operations, apiGroups, apiVersions, resources });
export const coreRule = (operations: string[], resource: string): Obj => rule(operations, [''], ['v1'], [resource]);
export const groupRule = rule;

/** a webhook scoped to the test's namespace (kube's fixtures all carry `namespaceSelector: {<unique>: "true"}`) */
export function webhook(e: WebhookTestEnv, name: string, path: string, rules: Obj[], extra: Obj = {}): Obj {
  return {
    name,
    rules,
    clientConfig: serviceRef(e, path),
    sideEffects: 'None',
    admissionReviewVersions: ['v1', 'v1beta1'],
    namespaceSelector: { matchLabels: { [e.unique]: 'true' } },
    ...extra,
  };
}

/** newDenyConfigMapWebhookFixture: also skips namespaces labelled skip-webhook-admission=yes */
export function denyConfigMapWebhook(e: WebhookTestEnv): Obj {
  return webhook(e, 'deny-unwanted-configmap-data.k8s.io', '/configmaps', [coreRule(['CREATE', 'UPDATE', 'DELETE'], 'configmaps')], {
    namespaceSelector: { matchLabels: { [e.unique]: 'true' }, matchExpressions: [{ key: 'skip-webhook-admission', operator: 'NotIn', values: ['yes'] }] },
  });
}

/** newMutateConfigMapWebhookFixture */
export function mutateConfigMapWebhook(e: WebhookTestEnv, stage: number): Obj {
  return webhook(e, `adding-configmap-data-stage-${stage}.k8s.io`, '/mutating-configmaps', [coreRule(['CREATE'], 'configmaps')]);
}

/** newValidatingIsReadyWebhookFixture / newMutatingIsReadyWebhookFixture: always-deny, markers namespace only, fail open */
export function isReadyWebhook(e: WebhookTestEnv, kind: 'validating' | 'mutating'): Obj {
  return webhook(e, `${kind}-is-webhook-configuration-ready.k8s.io`, '/always-deny', [coreRule(['CREATE'], 'configmaps')], {
    failurePolicy: 'Ignore',
    namespaceSelector: { matchLabels: { [`${e.unique}-markers`]: 'true' } },
    objectSelector: { matchLabels: { [e.unique]: 'true' } },
  });
}

export async function createConfiguration(e: WebhookTestEnv, kind: 'validating' | 'mutating', name: string, webhooks: Obj[], labels?: Record<string, string>): Promise<Obj> {
  return call(e.t, 'POST', kind === 'validating' ? VWC : MWC, { metadata: { name, ...(labels ? { labels } : {}) }, webhooks }, undefined, 201);
}

/** waitWebhookConfigurationReady: marker configmaps until the always-deny marker webhook refuses one */
export async function waitReady(e: WebhookTestEnv): Promise<void> {
  await eventually(async () => {
    const name = `marker-${Math.random().toString(36).slice(2, 10)}`;
    const r = await e.t.request('POST', `/api/v1/namespaces/${e.markers}/configmaps`, { body: { metadata: { name, labels: { [e.unique]: 'true' } } } });
    if (r.status < 300) {
      await e.t.request('DELETE', `/api/v1/namespaces/${e.markers}/configmaps/${name}`);
      return false;
    }
    expect(r.text).toContain('denied');
    return true;
  }, 'webhook configuration in force');
}

/** registers a configuration with the is-ready marker webhook added, and waits until it is in force */
export async function register(e: WebhookTestEnv, kind: 'validating' | 'mutating', name: string, webhooks: Obj[]): Promise<Obj> {
  const created = await createConfiguration(e, kind, name, [...webhooks, isReadyWebhook(e, kind)]);
  await waitReady(e);
  return created;
}

/** the Status of a refused request (its code checked) */
export async function refused(t: TestServer, method: string, path: string, body: unknown, code?: number, contentType?: string): Promise<Obj> {
  const r = await t.request(method, path, { body: body as object | undefined, headers: contentType ? { 'content-type': contentType } : {} });
  if (code === undefined) expect(r.status, r.text).toBeGreaterThanOrEqual(400);
  else expect(r.status, r.text).toBe(code);
  return r.json<Obj>();
}

export const cmPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
export const namedNonCompliantConfigMap = (name: string): Obj => ({ metadata: { name }, data: { 'webhook-e2e-test': 'webhook-disallow' } });
export const namedToBeMutatedConfigMap = (name: string): Obj => ({ metadata: { name }, data: { 'mutation-start': 'yes' } });
export const uuid = (): string => crypto.randomUUID();
