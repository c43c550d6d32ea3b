// kube-aggregator's remote availability controller
// (src/controllers/apiservice-availability.ts) on a real LocalStore with a
// simulated clock: the Service resolution's reasons, the discovery probe's
// result, re-checks on the clock and on Service/Endpoints changes, and local
// APIServices left alone.

import { describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { APIServiceAvailability } from '../../src/controllers/apiservice-availability.js';
import { ServiceResolutionError, type ServiceResolver } from '../../src/registry/admission/webhook-client.js';
import type { ApiObject } from '../../src/registry/types.js';
import { eventually } from '../helpers/eventually.js';
import { openLocalRegistry } from '../helpers/local-registry.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const W = { dryRun: false };

async function env() {
  const clock = new ManualClock(T0);
  const { store, gs, close } = await openLocalRegistry('orch.io', 'orch-avail-', clock);
  const apiServices = gs('apiservices', 'apiregistration.orch.io');
  const state = { resolve: (): void => undefined, probe: async (): Promise<void> => undefined, probes: 0, probed: new Set<string>() };
  const resolver: ServiceResolver = () => {
    state.resolve();
    return { host: '127.0.0.1', port: 1, serverName: 'api.w.svc' };
  };
  const ctrl = new APIServiceAvailability({
    store, apiServices, services: gs('services'), endpoints: gs('endpoints'), resolver, clock,
    probe: async (api) => {
      state.probes++;
      state.probed.add(api.metadata?.name ?? '');
      await state.probe();
    },
  });
  onTestFinished(async () => {
    ctrl.stop();
    await close();
  });
  const condition = async (name: string) => ((await apiServices.get('', name)).status as { conditions?: Record<string, string>[] } | undefined)?.conditions?.[0];
  return { clock, apiServices, gs, state, ctrl, condition };
}

const apiService = (name: string, service = true): ApiObject => {
  const [version, ...group] = name.split('.');
  return {
    apiVersion: 'apiregistration.orch.io/v1', kind: 'APIService', metadata: { name },
    spec: { group: group.join('.'), version, groupPriorityMinimum: 100, versionPriority: 10, ...(service ? { service: { namespace: 'w', name: 'api', port: 443 }, insecureSkipTLSVerify: true } : {}) },
  } as ApiObject;
};

describe('APIService availability controller', () => {
  it('a passing probe is Available=True (Passed); a failing one after the resync on the clock is FailedDiscoveryCheck, dated then', async () => {
    const e = await env();
    await e.apiServices.create('', apiService('v1.wardle.example.com'), W);
    e.ctrl.start();
    await eventually(async () => (await e.condition('v1.wardle.example.com'))?.status === 'True', 'Available=True');
    expect(await e.condition('v1.wardle.example.com')).toEqual({ type: 'Available', status: 'True', lastTransitionTime: iso(T0), reason: 'Passed', message: 'all checks passed' });
    e.state.probe = async () => {
      throw new Error('failing or missing response from https://127.0.0.1:1/apis/wardle.example.com/v1: bad status from https://127.0.0.1:1/apis/wardle.example.com/v1: 500');
    };
    e.clock.advance(30_000);
    await eventually(async () => (await e.condition('v1.wardle.example.com'))?.status === 'False', 'Available=False');
    expect(await e.condition('v1.wardle.example.com')).toEqual({
      type: 'Available', status: 'False', lastTransitionTime: iso(T0 + 30_000), reason: 'FailedDiscoveryCheck',
      message: 'failing or missing response from https://127.0.0.1:1/apis/wardle.example.com/v1: bad status from https://127.0.0.1:1/apis/wardle.example.com/v1: 500',
    });
  });

  it("a Service that does not resolve is reported with kube's reason and message, and is not probed; a Service change checks again", async () => {
    const e = await env();
    e.state.resolve = () => {
      throw new ServiceResolutionError('MissingEndpoints', 'no endpoints available for service "api"', 'https');
    };
    await e.apiServices.create('', apiService('v1.wardle.example.com'), W);
    e.ctrl.start();
    await eventually(async () => (await e.condition('v1.wardle.example.com'))?.reason === 'MissingEndpoints', 'MissingEndpoints');
    expect((await e.condition('v1.wardle.example.com'))?.message).toBe('endpoints for service/api in "w" have no addresses with port name "https"');
    expect(e.state.probes).toBe(0);
    e.state.resolve = () => undefined;
    await e.gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w' } } as ApiObject, W);
    await e.gs('services').create('w', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api' }, spec: { ports: [{ port: 443 }] } } as ApiObject, W);
    await eventually(async () => (await e.condition('v1.wardle.example.com'))?.reason === 'Passed', 'Passed after the Service changed');
  });

  it('a local APIService (no spec.service) is not its to check', async () => {
    const e = await env();
    await e.apiServices.create('', apiService('v1.local.example.com', false), W);
    await e.apiServices.create('', apiService('v1.wardle.example.com'), W);
    e.ctrl.start();
    await eventually(async () => (await e.condition('v1.wardle.example.com'))?.status === 'True', 'the remote one checked');
    expect(await e.condition('v1.local.example.com')).toMatchObject({ status: 'True', reason: 'Local' });
    expect([...e.state.probed]).toEqual(['v1.wardle.example.com']);
  });
});
