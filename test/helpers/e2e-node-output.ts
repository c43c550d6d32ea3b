// What kube's e2e `TestContainerOutput` (test/e2e/framework/pod/output) does,
// for the sig-node and sig-storage ports that read pod data through a command:
// create the pod, wait until it has Succeeded (a Failed pod fails the test),
// then read each container's log through the API (`pods/<name>/log`) and check
// that every expected string is in it (or every regexp matches it).

import { expect } from 'vitest';
import type { E2eEnv, Obj } from './e2e-apps.js';

export const BUSYBOX = 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1';
export const PODS = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;

/** the log of one container, as `kubectl logs` and e2epod.GetPodLogs read it */
export async function podLog(env: E2eEnv, ns: string, pod: string, container: string): Promise<string> {
  const r = await env.ts().request('GET', `${PODS(ns)}/${pod}/log?container=${encodeURIComponent(container)}`);
  expect(r.status, r.text).toBe(200);
  return r.text;
}

/** e2epod.WaitForPodSuccessInNamespace: phase Succeeded; Failed is an error at once */
export async function waitSucceeded(env: E2eEnv, ns: string, name: string): Promise<Obj> {
  return env.eventually(async () => {
    const p = await env.get(`${PODS(ns)}/${name}`);
    if (p.status?.phase === 'Failed') throw new Error(`pod ${name} failed: ${JSON.stringify(p.status)}`);
    return p.status?.phase === 'Succeeded' ? p : undefined;
  }, `${name} Succeeded`);
}

/**
 * TestContainerOutput / TestContainerOutputRegexp: the pod runs to success
 * and container `index`'s log holds every expected string (or matches every regexp)
 */
export async function testContainerOutput(env: E2eEnv, ns: string, pod: Obj, index: number, expected: (string | RegExp)[]): Promise<string> {
  await env.call('POST', PODS(ns), pod);
  await waitSucceeded(env, ns, pod.metadata.name);
  const log = await podLog(env, ns, pod.metadata.name, pod.spec.containers[index].name);
  for (const e of expected) {
    if (typeof e === 'string') expect(log).toContain(e);
    else expect(log).toMatch(e);
  }
  return log;
}

/** the Events of one object of the namespace */
export const podEvents = async (env: E2eEnv, ns: string, name: string): Promise<Obj[]> =>
  (await env.get(`/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`)).items;

/** PodClient.WaitForErrorEventOrSuccess: the first Killing, Failed or SysctlForbidden event, or none once Started */
export async function waitForErrorEventOrSuccess(env: E2eEnv, ns: string, name: string): Promise<Obj | null> {
  const found = await env.eventually(async () => {
    for (const e of await podEvents(env, ns, name)) {
      if (['Killing', 'Failed', 'SysctlForbidden'].includes(e.reason)) return { ev: e };
      if (e.reason === 'Started') return { ev: null };
    }
    return undefined;
  }, `an error event or Started for ${name}`, 40_000);
  return found.ev;
}

/** kube's e2e names: a prefix and a fresh uuid */
export const uniqueName = (prefix: string): string => `${prefix}${crypto.randomUUID()}`;
