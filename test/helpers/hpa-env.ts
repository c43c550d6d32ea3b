// A HorizontalPodAutoscaler controller on a real LocalStore and a ManualClock, with
// its events captured (test/unit/hpa-*.test.ts): the `default` namespace exists, the
// scale targets are the registry's kinds with a scale sub-resource.

import { HpaController, type HpaOptions } from '../../src/controllers/autoscaling/hpa.js';
import { EventRecorder } from '../../src/controllers/event-recorder.js';
import { ManualClock } from '../../src/core/clock.js';
import type { JSONValue } from '../../src/registry/types.js';
import { type LocalRegistry, openLocalRegistry } from './local-registry.js';

type Obj = Record<string, JSONValue>;

export interface HpaEnv {
  r: LocalRegistry;
  clock: ManualClock;
  hpa: HpaController;
  events: { reason: string; type: string; message: string; name: string }[];
  /** stops the controller and closes the store */
  close(): Promise<void>;
}

/** `extra`: more controller options, made once the registry and clock exist (a metrics client, the pod store) */
export async function openHpaEnv(t0: number, prefix: string, extra: (r: LocalRegistry, clock: ManualClock) => Partial<HpaOptions> = () => ({})): Promise<HpaEnv> {
  const clock = new ManualClock(t0);
  const r = await openLocalRegistry('orch.io', prefix, clock);
  await r.gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
  const events: HpaEnv['events'] = [];
  const recorder = new EventRecorder(
    {
      create: (_ns, e) => {
        events.push({ reason: String(e.reason), type: String(e.type), message: String(e.message), name: String((e.involvedObject as Obj).name) });
        return Promise.resolve(String((e.metadata as Obj).name));
      },
      update: () => Promise.resolve(true),
    },
    { component: 'horizontal-pod-autoscaler', clock, aggregateWindowMs: 0 },
  );
  const hpa = new HpaController({
    store: r.store,
    hpas: () => r.gs('horizontalpodautoscalers', 'autoscaling', 'v2'),
    scaleTarget: (group, kind) => {
      const def = r.registry.all().find((d) => d.group === group && d.kind === kind && d.scale);
      return def ? { def, store: r.gs(def.resource, def.group, def.version) } : undefined;
    },
    clock,
    events: recorder,
    ...extra(r, clock),
  });
  return {
    r, clock, hpa, events,
    async close() {
      hpa.stop();
      await r.close();
    },
  };
}
