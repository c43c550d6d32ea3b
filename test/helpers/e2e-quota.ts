// The helpers of Kubernetes' e2e ResourceQuota tests (resource_quota.go),
// shared by test/integration/e2e-apimachinery-quota*.test.ts: the framework's
// namespace, waitForResourceQuota / ensureResourceQuota on status.used, the
// never-scheduled test pod, and the best-effort scenario both the `scopes`
// and the `scopeSelector` form of a quota run.

import { afterAll, beforeAll, expect } from 'vitest';
import { parseAmount } from '../../src/registry/quota/amount.js';
import { type Api, type Obj, api } from './e2e.js';
import { eventually } from './eventually.js';
import { type TestServer, startTestServer } from './server.js';

export const base = (ns: string) => `/api/v1/namespaces/${ns}`;
export const quotas = (ns: string) => `${base(ns)}/resourcequotas`;
/** two quantities are equal (kube's Quantity.Cmp) */
export const same = (a: string | undefined, b: string) => a !== undefined && parseAmount(a)?.nano === parseAmount(b)?.nano;

export interface QuotaSteps {
  /** the framework's namespace: created, and ready for pods (its default ServiceAccount) */
  namespace(): Promise<string>;
  /** the e2e's waitForResourceQuota: status.used shows these values (others ignored) */
  waitForUsed(ns: string, name: string, used: Record<string, string>): Promise<Obj>;
  /** the e2e's ensureResourceQuota (Consistently), over a shorter time */
  ensureUsed(ns: string, name: string, used: Record<string, string>): Promise<void>;
  /** DELETE with gracePeriodSeconds 0 (metav1.NewDeleteOptions(0)) */
  deleteNow(path: string): Promise<Obj>;
}

/**
 * A test file's server with kube's group names (so quota names such as
 * gold.storageclass.storage.k8s.io/requests.storage are kube's), started
 * before its tests and stopped after (registers beforeAll/afterAll)
 */
export function quotaServer(): { t(): TestServer; k: Api; steps: QuotaSteps } {
  let t: TestServer | undefined;
  beforeAll(async () => {
    t = await startTestServer({ apiDomain: 'k8s.io' });
  });
  afterAll(async () => {
    await t?.stop();
  });
  const k = api(() => t!);
  return { t: () => t!, k, steps: quotaSteps(k) };
}

export function quotaSteps(k: Api): QuotaSteps {
  const usedOf = async (ns: string, name: string) => ((await k.get(`${quotas(ns)}/${name}`)).status?.used ?? undefined) as Record<string, string> | undefined;
  return {
    async namespace() {
      const ns = await k.namespace('resourcequota-');
      await eventually(async () => (await k.get(`${base(ns)}/serviceaccounts`)).items.some((a: Obj) => a.metadata.name === 'default'), `default ServiceAccount in ${ns}`);
      return ns;
    },
    waitForUsed(ns, name, used) {
      return eventually(async () => {
        const have = await usedOf(ns, name);
        return have && Object.entries(used).every(([r, v]) => same(have[r], v)) ? k.get(`${quotas(ns)}/${name}`) : undefined;
      }, `${ns}/${name} used ${JSON.stringify(used)}`, 20_000);
    },
    async ensureUsed(ns, name, used) {
      for (let i = 0; i < 5; i++) {
        const have = (await usedOf(ns, name)) ?? {};
        for (const [r, v] of Object.entries(used)) expect(same(have[r], v), `${name} ${r}=${have[r]}, want ${v}`).toBe(true);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    deleteNow: (path) => k.send('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 }),
  };
}

/** the e2e's newTestPodForQuota: never scheduled */
export function testPod(name: string, requests: Record<string, string> = {}, limits: Record<string, string> = {}, extra: Obj = {}): Obj {
  return {
    metadata: { name },
    spec: { nodeSelector: { 'x-test.k8s.io/unsatisfiable': 'not-schedulable' }, containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', resources: { requests, limits } }], ...extra },
  };
}

/**
 * "should verify ResourceQuota with best effort scope" (and its scope-selector
 * twin): a best-effort pod is counted by the BestEffort quota only, a
 * burstable one by the NotBestEffort quota only, and deletions give them back
 */
export async function bestEffortScenario(k: Api, s: QuotaSteps, quota: (name: string, scope: string) => Obj): Promise<void> {
  const ns = await s.namespace();
  await k.send('POST', quotas(ns), quota('quota-besteffort', 'BestEffort'));
  await s.waitForUsed(ns, 'quota-besteffort', { pods: '0' });
  await k.send('POST', quotas(ns), quota('quota-not-besteffort', 'NotBestEffort'));
  await s.waitForUsed(ns, 'quota-not-besteffort', { pods: '0' });

  await k.send('POST', `${base(ns)}/pods`, testPod('pfpod'));
  await s.waitForUsed(ns, 'quota-besteffort', { pods: '1' });
  await s.waitForUsed(ns, 'quota-not-besteffort', { pods: '0' });
  await s.deleteNow(`${base(ns)}/pods/pfpod`);
  await s.waitForUsed(ns, 'quota-besteffort', { pods: '0' });

  await k.send('POST', `${base(ns)}/pods`, testPod('burstable-pod', { cpu: '500m', memory: '200Mi' }, { cpu: '1', memory: '400Mi' }));
  await s.waitForUsed(ns, 'quota-not-besteffort', { pods: '1' });
  await s.waitForUsed(ns, 'quota-besteffort', { pods: '0' });
  await s.deleteNow(`${base(ns)}/pods/burstable-pod`);
  await s.waitForUsed(ns, 'quota-not-besteffort', { pods: '0' });
}

const TERMINATING_REQUESTS = { cpu: '500m', memory: '200Mi' };
const TERMINATING_LIMITS = { cpu: '1', memory: '400Mi' };
const COUNTED = { pods: '1', 'requests.cpu': '500m', 'requests.memory': '200Mi', 'limits.cpu': '1', 'limits.memory': '400Mi' };
const NONE = { pods: '0', 'requests.cpu': '0', 'requests.memory': '0', 'limits.cpu': '0', 'limits.memory': '0' };

/**
 * "should verify ResourceQuota with terminating scopes" (and its scope-selector
 * twin): a long-running pod is counted by the NotTerminating quota only; then
 * `whileLongRunning` (the twins differ there: one deletes the pod, the other
 * moves it into the Terminating scope first), and a pod with an active deadline
 * is counted by the Terminating quota only, until it is deleted
 */
export async function terminatingScenario(
  k: Api,
  s: QuotaSteps,
  quota: (name: string, scope: string) => Obj,
  whileLongRunning: (ns: string, pod: { name: string; terminating: Obj }, counted: Record<string, string>, none: Record<string, string>) => Promise<void>,
): Promise<void> {
  const ns = await s.namespace();
  await k.send('POST', quotas(ns), quota('quota-terminating', 'Terminating'));
  await s.waitForUsed(ns, 'quota-terminating', { pods: '0' });
  await k.send('POST', quotas(ns), quota('quota-not-terminating', 'NotTerminating'));
  await s.waitForUsed(ns, 'quota-not-terminating', { pods: '0' });

  const terminating = testPod('terminating-pod', TERMINATING_REQUESTS, TERMINATING_LIMITS, { activeDeadlineSeconds: 3600 });
  await k.send('POST', `${base(ns)}/pods`, testPod('test-pod', TERMINATING_REQUESTS, TERMINATING_LIMITS));
  await s.waitForUsed(ns, 'quota-not-terminating', COUNTED);
  await s.ensureUsed(ns, 'quota-terminating', NONE);
  await whileLongRunning(ns, { name: 'test-pod', terminating }, COUNTED, NONE);

  await k.send('POST', `${base(ns)}/pods`, terminating);
  await s.waitForUsed(ns, 'quota-terminating', COUNTED);
  await s.waitForUsed(ns, 'quota-not-terminating', NONE);
  await s.ensureUsed(ns, 'quota-not-terminating', NONE);
  await s.deleteNow(`${base(ns)}/pods/terminating-pod`);
  await s.waitForUsed(ns, 'quota-terminating', NONE);
}
