// The probes behind `kubectl get componentstatuses` (src/registry/kinds/componentstatus.ts).
// Kubernetes asks its scheduler's and controller manager's /healthz and each
// etcd server; orch runs both in-process behind the leader gate (the Raft
// leader runs them, src/controllers/leader-gate.ts), so the rows say:
//   etcd-0             the store as this member sees it (LocalStore: its log
//                      writes; Raft: running with a known leader), as /healthz "etcd";
//   scheduler          on the leader: the scheduler's gate runs and its informers
//   controller-manager synced; on a follower: a leader is known (it runs them there).
// Healthy rows carry kube's message `ok`.

import type { ComponentHealth, ComponentProbe } from '../registry/kinds/componentstatus.js';
import type { RevisionedStore } from '../store/types.js';
import type { LeaderOnlyController } from './readiness.js';

/** the name of the scheduler's gate (workloads-setup.ts) */
const SCHEDULER = 'scheduler';

export function componentProbes(store: Pick<RevisionedStore, 'healthy' | 'isLeader'>, controllers: () => LeaderOnlyController[]): ComponentProbe[] {
  const ok: ComponentHealth = { healthy: true, message: 'ok', error: '' };
  const fail = (error: string): ComponentHealth => ({ healthy: false, message: '', error });
  /** the health of leader-run controllers: synced here when leading, a known leader otherwise */
  const leaderRun = (what: string, pick: (all: LeaderOnlyController[]) => LeaderOnlyController[], absent: string): ComponentHealth => {
    if (!(store.isLeader?.() ?? true)) {
      return store.healthy() ? ok : fail(`no leader is known: the ${what} runs on the Raft leader`);
    }
    const mine = pick(controllers());
    if (mine.length === 0) return fail(absent);
    const behind = mine.filter((c) => !c.running || !(c.synced?.() ?? true)).map((c) => c.name);
    return behind.length === 0 ? ok : fail(`not running or not synced yet: ${behind.join(', ')}`);
  };
  return [
    // the order of kube's usual output (its rows come from concurrent probes)
    {
      name: SCHEDULER,
      check: () =>
        Promise.resolve(leaderRun('scheduler', (all) => all.filter((c) => c.name === SCHEDULER), 'the in-process scheduler is disabled (--controllers=-scheduler)')),
    },
    {
      name: 'controller-manager',
      check: () => Promise.resolve(leaderRun('controller manager', (all) => all.filter((c) => c.name !== SCHEDULER), 'no controllers are enabled (--controllers)')),
    },
    {
      name: 'etcd-0',
      check: () => Promise.resolve(store.healthy() ? ok : fail('the store is not healthy')),
    },
  ];
}
