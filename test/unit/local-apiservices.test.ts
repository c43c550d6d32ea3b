// The local APIServices controller (src/controllers/local-apiservices.ts) on a
// real LocalStore: a built-in's APIService a user pointed at a Service (as
// metrics-server's manifest does over v1beta1.metrics.<domain>) is aggregated
// from then on, and the next start's `onstart` pass leaves it alone.

import { describe, expect, it, onTestFinished } from 'vitest';
import { LocalAPIServices } from '../../src/controllers/local-apiservices.js';
import { eventually } from '../helpers/eventually.js';
import { openLocalRegistry } from '../helpers/local-registry.js';

describe('local APIServices', () => {
  it("an automanaged APIService given a spec.service is kept by the next start's pass, not made local again", async () => {
    const { store, gs, registry, close } = await openLocalRegistry('orch.io', 'orch-localapis-');
    const apiServices = gs('apiservices', 'apiregistration.orch.io');
    const start = () => {
      const c = new LocalAPIServices({ registry, apiDomain: 'orch.io', apiServices: () => apiServices, store });
      c.start();
      onTestFinished(() => c.stop());
      return c;
    };
    onTestFinished(() => close());
    const first = start();
    await eventually(() => first.hasSynced(), 'the first pass');
    const name = 'v1.coordination.orch.io';
    const aggregated = { service: { namespace: 'kube-system', name: 'metrics-server', port: 443 }, insecureSkipTLSVerify: true };
    await apiServices.guaranteedUpdate('', name, { dryRun: false }, (c) => ({ ...c!, spec: { ...(c!.spec as object), ...aggregated } }));
    first.stop();
    const second = start();
    await eventually(() => second.hasSynced(), 'the next start\'s pass');
    expect((await apiServices.get('', name)).spec).toMatchObject(aggregated);
    // the others are still the server's
    expect((await apiServices.get('', 'v1.apps')).spec).toEqual({ group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
  });
});
