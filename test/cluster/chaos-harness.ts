// The chaos run (docs/reliability.md "Partition nemesis"), shared by the
// short run in test/cluster/chaos.test.ts and the long one in bench/chaos.ts.
//
// A client workload of creates, updates with resourceVersion preconditions
// and consistent reads over the HTTPS API of every member, watchers that
// follow the ConfigMaps of `default` across members, and a nemesis cycling
// through: SIGKILL of the leader (and restart), the leader isolated from both
// followers, one follower isolated, a flapping link between the leader and a
// follower, a SIGSTOP pause of the leader, and wall-clock jumps on the leader
// (forward past the watch window, and backward). Every operation's call and
// return is recorded for the linearizability checker; the report says what
// was lost, what a watcher missed, and how long writes were unavailable.

import { checkLinearizable, objectModel, type CheckResult, type ObjectInput, type ObjectOutput, type Operation } from './linearizability.js';
import { ChaosCluster, type Member, sleep } from './chaos-cluster.js';
import { type WatchSegment, WatchFollower, checkWatches } from './chaos-watch.js';

export type FaultKind = 'kill-leader' | 'isolate-leader' | 'isolate-follower' | 'flapping-link' | 'pause-leader' | 'clock-jump-forward' | 'clock-jump-backward';
/** the slowest (a restart) last, so that a short run reaches every other kind first */
export const ALL_FAULTS: FaultKind[] = ['isolate-follower', 'flapping-link', 'pause-leader', 'clock-jump-forward', 'isolate-leader', 'clock-jump-backward', 'kill-leader'];

export interface ChaosOptions {
  /** how long the workload runs (the nemesis cycles through the faults meanwhile); ignored with `passes` */
  workloadMs: number;
  /** instead: run until the nemesis has gone through the fault list this many times */
  passes?: number;
  clients?: number;
  keys?: number;
  watchers?: number;
  tickMs?: number;
  /** how long a partition or pause lasts */
  faultMs?: number;
  /** quiet time before the first fault and after each recovery (default 2000 / 1500 ms) */
  warmupMs?: number;
  settleMs?: number;
  /** faults in this order, cycled until the workload ends */
  faults?: FaultKind[];
  log?: (msg: string) => void;
}

export interface ChaosReport {
  durationMs: number;
  operations: number;
  acknowledgedWrites: number;
  lostWrites: string[];
  linearizability: CheckResult;
  faultsInjected: Partial<Record<FaultKind, number>>;
  leaderChanges: number;
  /** the longest time in which no write was acknowledged by any member */
  maxUnavailabilityMs: number;
  /** time from each fault's heal (or kill) until a write was acknowledged again */
  recoveriesMs: number[];
  watch: { segments: number; events: number; expired: number; problems: string[] };
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? (() => undefined);
  const CLIENTS = opts.clients ?? 6;
  const KEYS = opts.keys ?? 12;
  const faultMs = opts.faultMs ?? 2500;
  const t0 = Date.now();
  const phase = (what: string) => log(`+${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
  const cluster = new ChaosCluster(opts.tickMs ?? 50);
  await cluster.init();
  phase('certificates made');
  try {
    for (const m of cluster.members) cluster.start(m);
    await Promise.all(cluster.members.map((m) => cluster.waitServing(m)));
    phase('members serving');

    // ---------------------------------------------------------------- workload
    const history: Operation<ObjectInput, ObjectOutput>[] = [];
    let clock = 0;
    const now = () => ++clock; // logical clock: call/return order as observed by this process
    const lastRv = new Map<string, number>();
    const acked = new Map<string, { key: string; value: string; rv: number }>();
    const ackTimes: number[] = [];
    let stop = false;
    let seq = 0;
    const path = (key: string) => `/api/v1/namespaces/default/configmaps/${key}`;
    const pick = (): Member | undefined => {
      const targets = cluster.live().filter((m) => !m.paused);
      return targets[Math.floor(Math.random() * targets.length)];
    };
    const ack = (key: string, value: string, rv: number) => {
      acked.set(`${key}@${rv}`, { key, value, rv });
      lastRv.set(key, rv);
      ackTimes.push(Date.now());
    };
    const client = async (id: number): Promise<void> => {
      while (!stop) {
        const m = pick();
        const key = `k${Math.floor(Math.random() * KEYS)}`;
        const dice = Math.random();
        const value = `c${id}-${++seq}`;
        if (!m) {
          await sleep(50);
          continue;
        }
        if (dice < 0.4) {
          const call = now();
          try {
            const r = await cluster.api(m, 'GET', path(key));
            const ret = now();
            if (r.status === 200) {
              const rv = Number((r.body.metadata as { resourceVersion: string }).resourceVersion);
              history.push({ key, call, ret, client: id, input: { type: 'read' }, output: { type: 'ok', rv, value: (r.body.data as { v: string }).v } });
            } else if (r.status === 404) {
              history.push({ key, call, ret, client: id, input: { type: 'read' }, output: { type: 'notFound' } });
            }
          } catch {
            // a read without an answer has no effect: not recorded
          }
        } else if (dice < 0.6 || !lastRv.has(key)) {
          const input: ObjectInput = { type: 'create', value };
          const call = now();
          let output: ObjectOutput = { type: 'unknown' };
          let ret = Infinity;
          try {
            const r = await cluster.api(m, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key }, data: { v: value } });
            if (r.status === 201) {
              const rv = Number((r.body.metadata as { resourceVersion: string }).resourceVersion);
              output = { type: 'ok', rv };
              ret = now();
              ack(key, value, rv);
            } else if (r.status === 409) {
              output = { type: 'exists' };
              ret = now();
            }
          } catch {
            // unknown outcome
          }
          history.push({ key, call, ret, client: id, input, output });
        } else {
          const expectRv = lastRv.get(key)!;
          const input: ObjectInput = { type: 'update', value, expectRv };
          const call = now();
          let output: ObjectOutput = { type: 'unknown' };
          let ret = Infinity;
          try {
            const r = await cluster.api(m, 'PUT', path(key), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key, resourceVersion: String(expectRv) }, data: { v: value } });
            if (r.status === 200) {
              const rv = Number((r.body.metadata as { resourceVersion: string }).resourceVersion);
              output = { type: 'ok', rv };
              ret = now();
              ack(key, value, rv);
            } else if (r.status === 409 || r.status === 404) {
              // update reads at a ReadIndex before judging 404/409 (GenericStore.catchUp): linearizable information
              output = r.status === 409 ? { type: 'conflict' } : { type: 'notFound' };
              ret = now();
            }
          } catch {
            // unknown outcome
          }
          history.push({ key, call, ret, client: id, input, output });
        }
        await sleep(10);
      }
    };

    // ---------------------------------------------------------------- leader changes
    const leaderTerms = new Set<string>();
    const monitor = async (): Promise<void> => {
      while (!stop) {
        for (const m of cluster.live()) {
          const s = await cluster.raftz(m);
          if (s?.leader) leaderTerms.add(`${s.term}:${s.leader}`);
        }
        await sleep(250);
      }
    };

    // ---------------------------------------------------------------- watchers
    const segments: WatchSegment[] = [];
    const followers = Array.from({ length: opts.watchers ?? 3 }, () => new WatchFollower(cluster, pick, segments));

    // ---------------------------------------------------------------- nemesis
    const recoveries: number[] = [];
    const injected: Partial<Record<FaultKind, number>> = {};
    const writeProbe = async (): Promise<number> => {
      const start = Date.now();
      for (;;) {
        for (const m of cluster.live().filter((x) => !x.paused)) {
          try {
            const r = await cluster.api(m, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'probe-' }, data: {} }, 5000);
            if (r.status === 201) return Date.now() - start;
          } catch {
            // not yet
          }
        }
        if (Date.now() - start > 60_000) return Infinity;
        await sleep(100);
      }
    };
    const leaderOrAny = async (): Promise<Member> => (await cluster.findLeader()) ?? cluster.live()[0]!;
    const inject = async (kind: FaultKind): Promise<void> => {
      const leader = await leaderOrAny();
      phase(`nemesis: ${kind} (leader ${leader.name})`);
      injected[kind] = (injected[kind] ?? 0) + 1;
      switch (kind) {
        case 'kill-leader':
          await cluster.kill(leader);
          recoveries.push(await writeProbe()); // from the kill: the other two must elect and serve
          cluster.start(leader);
          await cluster.waitServing(leader);
          return;
        case 'isolate-leader':
          await cluster.faults(leader, { partitioned: ['*'] });
          await sleep(faultMs);
          await cluster.faults(leader);
          break;
        case 'isolate-follower': {
          const f = cluster.live().find((m) => m !== leader) ?? leader;
          await cluster.faults(f, { partitioned: ['*'] });
          await sleep(faultMs);
          await cluster.faults(f);
          break;
        }
        case 'flapping-link': {
          const f = cluster.live().find((m) => m !== leader) ?? leader;
          const end = Date.now() + faultMs;
          for (let on = true; Date.now() < end; on = !on) {
            await cluster.faults(leader, on ? { partitioned: [f.name] } : undefined);
            await sleep(150 + Math.random() * 300);
          }
          await cluster.faults(leader);
          break;
        }
        case 'pause-leader':
          cluster.pause(leader);
          await sleep(faultMs);
          cluster.resume(leader);
          break;
        case 'clock-jump-forward':
        case 'clock-jump-backward': {
          // past the 5-minute watch window: the leader's compaction and timestamps see the jump
          await cluster.clock(leader, kind === 'clock-jump-forward' ? 10 * 60_000 : -10 * 60_000);
          await sleep(faultMs);
          await cluster.clock(leader, 0).catch(() => undefined);
          break;
        }
      }
      recoveries.push(await writeProbe());
    };
    const order = opts.faults ?? ALL_FAULTS;
    let nemesisDone = false;
    const nemesis = async (): Promise<void> => {
      await sleep(opts.warmupMs ?? 2000);
      const total = opts.passes !== undefined ? opts.passes * order.length : Infinity;
      for (let i = 0; !stop && i < total; i++) {
        await inject(order[i % order.length]!);
        await sleep(opts.settleMs ?? 1500);
      }
      nemesisDone = true;
    };

    const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
    const mon = monitor();
    for (const f of followers) f.start();
    const chaos = nemesis();
    const workStart = Date.now();
    let nemesisError: unknown;
    void chaos.catch((e: unknown) => {
      nemesisError = e;
    });
    const running = () => (opts.passes !== undefined ? !nemesisDone : Date.now() - workStart < opts.workloadMs);
    while (running() && nemesisError === undefined) await sleep(200);
    stop = true;
    await chaos.catch(() => undefined);
    if (nemesisError) throw nemesisError;
    await Promise.all(clients);
    await mon;

    phase('workload stopped');
    // heal everything and read every key back from every member
    for (const m of cluster.members) {
      cluster.resume(m);
      if (!m.proc) cluster.start(m);
    }
    await Promise.all(cluster.members.map((m) => cluster.waitServing(m)));
    for (const m of cluster.members) {
      await cluster.faults(m);
      await cluster.clock(m, 0);
    }
    // one more write the watchers must see, then they stop
    const finalRv = Number(((await cluster.api(cluster.members[0]!, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'final-' }, data: {} })).body.metadata as { resourceVersion: string }).resourceVersion);
    await Promise.all(followers.map((f) => f.stopAfter(finalRv, 30_000)));
    phase('healed, watchers caught up');

    const finals = new Map<string, { value: string; rv: number } | undefined>();
    for (let k = 0; k < KEYS; k++) {
      const key = `k${k}`;
      for (const m of cluster.members) {
        const call = now();
        let r: Awaited<ReturnType<typeof cluster.api>> | undefined;
        for (let attempt = 0; attempt < 20 && (!r || (r.status !== 200 && r.status !== 404)); attempt++) {
          r = await cluster.api(m, 'GET', path(key)).catch(() => undefined);
          if (!r || (r.status !== 200 && r.status !== 404)) await sleep(250);
        }
        const ret = now();
        if (r?.status === 200) {
          const rv = Number((r.body.metadata as { resourceVersion: string }).resourceVersion);
          const value = (r.body.data as { v: string }).v;
          history.push({ key, call, ret, input: { type: 'read' }, output: { type: 'ok', rv, value } });
          finals.set(key, { value, rv });
        } else if (r?.status === 404) {
          history.push({ key, call, ret, input: { type: 'read' }, output: { type: 'notFound' } });
          finals.set(key, undefined);
        } else throw new Error(`final read of ${key} on ${m.name}: ${r?.status ?? 'no answer'}`);
      }
    }

    phase('final reads done');
    // ---------------------------------------------------------------- checks
    // an acknowledged write is lost when its key is gone or older at the end
    const lostWrites = [...acked.entries()].filter(([, w]) => !finals.get(w.key) || finals.get(w.key)!.rv < w.rv).map(([id]) => id);
    const linearizability = checkLinearizable(history, objectModel, { maxStatesPerKey: 300_000 });
    const watch = checkWatches(segments, [...acked.values()]);
    phase('checked');
    let maxGap = 0;
    ackTimes.sort((a, b) => a - b);
    for (let i = 1; i < ackTimes.length; i++) maxGap = Math.max(maxGap, ackTimes[i]! - ackTimes[i - 1]!);
    return {
      durationMs: Date.now() - t0,
      operations: history.length,
      acknowledgedWrites: acked.size,
      lostWrites,
      linearizability,
      faultsInjected: injected,
      leaderChanges: Math.max(0, leaderTerms.size - 1),
      maxUnavailabilityMs: maxGap,
      recoveriesMs: recoveries,
      watch,
    };
  } finally {
    await cluster.close();
  }
}
