// What the disruption controller adds to the pod write path (docs/controllers.md
// "Disruption budgets"): pod status updates through the registry on a real
// LocalStore, with the controller stopped or running, and with 0 or N budgets
// in the namespace (each selecting 1/N of the pods, so every write makes one
// budget be computed again). Prints CPU µs per pod update (process CPU: the
// write, the informer handlers, the controller's syncs and status writes),
// alternating off/on rounds so host noise falls on both sides.
//
//   npx tsx bench/disruption.ts [pods=1000] [updates=4000] [budgets=50] [rounds=2]
//   BENCH_STEADY=1: every update keeps the pod Ready (a budget is computed, its status is unchanged, no write)

import { DisruptionController } from '../src/controllers/disruption/controller.js';
import { openLocalRegistry } from '../test/helpers/local-registry.js';

const [PODS = 1000, UPDATES = 4000, BUDGETS = 50, ROUNDS = 2] = process.argv.slice(2).map(Number);
const D = 'orch.io';

async function round(controller: boolean, budgets: number): Promise<number> {
  const { store, gs, close } = await openLocalRegistry(D, 'orch-bench-pdb-');
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
  const groups = Math.max(1, budgets);
  for (let i = 0; i < PODS; i++) {
    await gs('pods').create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, labels: { app: `a${i % groups}` } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }] } }, { dryRun: false });
  }
  for (let b = 0; b < budgets; b++) {
    await gs('poddisruptionbudgets', 'policy').create('default', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: `b${b}` }, spec: { minAvailable: 1, selector: { matchLabels: { app: `a${b}` } } } }, { dryRun: false });
  }
  const c = new DisruptionController({ store, pdbs: () => gs('poddisruptionbudgets', 'policy'), pods: () => gs('pods'), replicaSets: () => gs('replicasets', 'apps'), deployments: () => gs('deployments', 'apps') });
  if (controller) c.start();
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await c.settled();
      await new Promise((r) => setImmediate(r));
    }
  };
  const steady = process.env.BENCH_STEADY === '1';
  if (steady) {
    // every pod Ready before the measurement: the measured updates change no budget
    for (let i = 0; i < PODS; i++) await gs('pods').guaranteedUpdate('default', `p${i}`, { dryRun: false }, (cur) => ({ ...cur!, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }));
  }
  await settle();
  const writesBefore = c.writes;
  const t0 = process.cpuUsage();
  for (let i = 0; i < UPDATES; i++) {
    const name = `p${i % PODS}`;
    const ready = process.env.BENCH_STEADY === '1' ? 'True' : Math.floor(i / PODS) % 2 === 0 ? 'True' : 'False';
    const extra = process.env.BENCH_STEADY === '1' ? { message: `beat ${i}` } : {};
    await gs('pods').guaranteedUpdate('default', name, { dryRun: false }, (cur) => ({ ...cur!, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready }], ...extra } }));
  }
  await settle();
  const d = process.cpuUsage(t0);
  const writes = c.writes - writesBefore;
  c.stop();
  await close();
  if (controller && budgets > 0 && !steady && writes === 0) throw new Error('the controller wrote no status: the bench measures nothing');
  statusWrites.push(writes);
  return (d.user + d.system) / UPDATES;
}
const statusWrites: number[] = [];

const out: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const budgets of [0, BUDGETS]) {
    for (const on of [false, true]) {
      const k = `${on ? 'controller' : 'no controller'}, ${budgets} budgets`;
      (out[k] ??= []).push(Math.round(await round(on, budgets)));
    }
  }
}
console.log(JSON.stringify({ pods: PODS, updates: UPDATES, steady: process.env.BENCH_STEADY === '1', cpuUsPerPodUpdate: out, statusWritesPerRound: statusWrites.filter((_, i) => i % 2 === 1) }));
