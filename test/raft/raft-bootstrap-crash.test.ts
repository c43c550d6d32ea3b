// An initial member that crashes before its first Ready (the bootstrap
// entries 1..n and term 1) is written comes back as its host brings it back:
// RaftStore.start bootstraps again when the storage is empty. The simulator
// used to restart it as a node with no configuration; it then learnt its
// membership one entry at a time, applied "addNode <itself>" (index 1) alone,
// and, cut off from the others, elected itself in a one-voter configuration
// and applied its own entry at an index the cluster had already committed
// (docs/raft.md "A crash before the bootstrap entries are written").

import { describe, expect, it } from 'vitest';
import { runSchedule, type Action, type Variant } from './schedule.js';
import { Sim } from './sim.js';

const ids = ['n0', 'n1', 'n2'];

describe('a crash before the bootstrap Ready is written', () => {
  it('the restarted member bootstraps again: the full configuration, term 1, nothing applied', () => {
    // asyncPersist 1: every Ready stays "being written" until a step completes it
    const sim = new Sim({ ids, seed: 7, asyncPersist: 1, maxSizePerMsg: 64 });
    const n0 = sim.node('n0');
    expect(n0.persisting?.entries.map((e) => e.index)).toEqual([1, 2, 3]);
    sim.crash('n0');
    expect(n0.disk.entries).toEqual([]);
    sim.restart('n0');
    const st = n0.raw.status();
    expect(st.voters).toEqual(ids);
    expect([st.term, st.lastIndex, st.commit]).toEqual([1, 3, 3]);
  });

  it('cut off from the others, the restarted member never leads and the cluster stays safe', () => {
    const sim = new Sim({ ids, seed: 11, asyncPersist: 1, maxSizePerMsg: 64, maxInflightMsgs: 1, checkQuorum: false });
    sim.crash('n0');
    sim.restart('n0');
    // n0 may receive entry 1 ("addNode n0") but none of entries 2..3: a member that had to learn
    // its configuration from the log would know only itself
    sim.net.filter = (m) => !(m.to === 'n0' && m.type === 'append' && m.entries.some((e) => e.index === 2 || e.index === 3));
    expect(sim.runUntil(() => sim.stableLeader() !== undefined && sim.node('n0').appliedIndex >= 1, 300)).toBe(true);
    sim.net.partition([['n0'], ['n1', 'n2']]);
    expect(sim.propose('n0', 'from-n0')).toBe(true);
    sim.run(100); // many election timeouts of n0, alone (the sim checks every invariant at each step)
    expect([...sim.leaders.values()]).not.toContain('n0');
    expect(sim.node('n0').raw.status().voters).toEqual(ids);
    sim.net.filter = undefined;
    sim.healAll();
    expect(sim.runUntil(() => sim.allApplied(ids), 300)).toBe(true);
    sim.checkStateMachines(ids);
  });

  // as fast-check printed them: [seed, actions, variant] (npx tsx test/raft/replay.ts <size> '<json>')
  const counterexamples: { name: string; size: number; was: string; json: string }[] = [
    {
      name: 'the counterexample found by raft-safety.property.test.ts on 2026-11-27',
      size: 3,
      was: 'state machine safety: node n0 applied 3/normal/ at 2, another node applied 1/confChange/…addNode n1',
      json: '[1869130790,[{"k":"crash","node":0,"midReady":false},{"k":"restart","node":0},{"k":"steps","n":7},{"k":"steps","n":17},{"k":"propose","node":0,"count":1},{"k":"steps","n":1},{"k":"steps","n":10},{"k":"heal"},{"k":"partition","mask":1},{"k":"propose","node":0,"count":1},{"k":"net","drop":0,"dup":0,"delay":0},{"k":"steps","n":4},{"k":"steps","n":10},{"k":"partition","mask":1},{"k":"crash","node":0,"midReady":false},{"k":"propose","node":0,"count":1},{"k":"steps","n":1},{"k":"propose","node":0,"count":1},{"k":"propose","node":0,"count":1},{"k":"restart","node":0},{"k":"heal"},{"k":"steps","n":1},{"k":"steps","n":1},{"k":"steps","n":1}],{"preVote":true,"checkQuorum":false,"maxInflightMsgs":1,"reportSnapshots":false,"asyncPersist":0.8}]',
    },
    {
      name: 'its sibling in a 5-node cluster without pre-vote (found by the deeper search on main)',
      size: 5,
      was: 'leader completeness: leader n0 (term 3) has 3/normal/ at 2, committed 1/confChange/…addNode n1 (term 1)',
      json: '[1,[{"k":"crash","node":0,"midReady":false},{"k":"restart","node":0},{"k":"steps","n":19},{"k":"partition","mask":1},{"k":"propose","node":0,"count":1},{"k":"conf","node":0,"target":0,"add":false},{"k":"steps","n":1},{"k":"steps","n":1},{"k":"conf","node":0,"target":0,"add":false},{"k":"steps","n":1},{"k":"steps","n":1},{"k":"propose","node":0,"count":1},{"k":"propose","node":0,"count":1},{"k":"restart","node":0},{"k":"steps","n":1},{"k":"read","node":0},{"k":"compact","node":0},{"k":"compact","node":0},{"k":"crash","node":0,"midReady":false},{"k":"propose","node":0,"count":1},{"k":"tickOne","node":0,"n":1},{"k":"restart","node":0},{"k":"steps","n":10},{"k":"propose","node":0,"count":1}],{"preVote":false,"checkQuorum":false,"maxInflightMsgs":1,"reportSnapshots":false,"asyncPersist":0.8}]',
    },
  ];
  for (const ce of counterexamples) {
    it(`${ce.name} passes (was: ${ce.was})`, () => {
      const [seed, actions, variant] = JSON.parse(ce.json) as [number, Action[], Variant];
      expect(actions.length).toBeGreaterThan(20);
      expect(() => runSchedule(ce.size, seed, actions, variant)).not.toThrow();
    });
  }
});
