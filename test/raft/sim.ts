// Deterministic simulation of a Raft cluster (docs/raft.md "Testing").
//
// N RawNodes, a simulated network (loss, duplication, delay => reordering,
// partitions), a logical clock (ticks), a simulated disk per node (what a
// Ready persisted survives a crash; anything else is lost) and a trivial state
// machine (the list of applied entries). Every random choice comes from one
// seeded PRNG, so a seed replays exactly. The harness checks Raft's safety
// properties (Raft §5.4, Figure 3) as it runs and throws on a violation:
//   election safety, log matching, leader completeness, state machine safety.

import { pack, unpack } from 'msgpackr';
import { RawNode } from '../../src/raft/raw-node.js';
import { mulberry32 } from '../../src/raft/prng.js';
import {
  NONE,
  ProposalDroppedError,
  type ConfChange,
  type Entry,
  type HardState,
  type Message,
  type NodeId,
  type RaftConfig,
  type Ready,
  type Snapshot,
  decodeConfChange,
} from '../../src/raft/types.js';

export interface SimConfig {
  ids: NodeId[];
  seed?: number;
  electionTick?: number;
  heartbeatTick?: number;
  preVote?: boolean;
  checkQuorum?: boolean;
  maxSizePerMsg?: number;
  maxInflightMsgs?: number;
  /** round-trip every message through msgpackr (default true) */
  serialize?: boolean;
  /**
   * probability that a node's Ready stays "being persisted" for a while, as
   * with the real driver (src/raft/node.ts): its sendBeforePersist messages
   * leave at once, the node keeps stepping messages and sending what
   * RawNode.takeMessagesNow hands out, and a crash meanwhile loses the Ready
   * (default 0: every Ready is persisted at once)
   */
  asyncPersist?: number;
}

/** What the simulated disk of a node holds. */
export interface Disk {
  hardState: HardState;
  snapshot?: Snapshot;
  entries: Entry[];
}

/** One applied entry of the trivial state machine. */
export interface AppliedEntry {
  index: number;
  term: number;
  type: Entry['type'];
  /** hex of the entry data */
  data: string;
}

export class InvariantViolation extends Error {
  constructor(msg: string) {
    super(msg);
    this.name = 'InvariantViolation';
  }
}

const hex = (d: Uint8Array): string => Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('hex');
const entryKey = (e: { term: number; type: string; data: string }): string => `${e.term}/${e.type}/${e.data}`;
export const text = (s: string): Uint8Array => new TextEncoder().encode(s);
export const textHex = (s: string): string => hex(text(s));

/** nothing was ever written (RaftStorage.load's `empty`: no hard state, no snapshot, no entries) */
function diskEmpty(d: Disk): boolean {
  return d.snapshot === undefined && d.entries.length === 0 && d.hardState.term === 0 && d.hardState.vote === NONE && d.hardState.commit === 0;
}

export class SimNode {
  rn: RawNode | undefined;
  disk: Disk = { hardState: { term: 0, vote: NONE, commit: 0 }, entries: [] };
  /** the state machine: every applied entry, in index order (rebuilt from the snapshot on restart) */
  sm: AppliedEntry[] = [];
  appliedIndex = 0;
  /** ReadIndex results by context */
  reads = new Map<string, number>();
  /** crash right after the next Ready is persisted (before its messages are sent) */
  crashAfterNextPersist = false;
  /** a Ready whose persistence is in progress (SimConfig.asyncPersist) */
  persisting: Ready | undefined;
  /** the last committed entry of `persisting` applied when its write started (already durable, as the driver does) */
  appliedEarlyTo = 0;
  /** the term when `persisting` was handed out (its soft state is of that term, even if the node moved on meanwhile) */
  persistingTerm = 0;
  /** removed from the simulation (e.g. after being removed from the cluster) */
  stopped = false;

  /** `initialVoters`: the bootstrap membership of an initial member (undefined for a node that joins later) */
  constructor(
    readonly id: NodeId,
    readonly initialVoters?: NodeId[],
  ) {}

  get up(): boolean {
    return this.rn !== undefined;
  }

  get raw(): RawNode {
    if (!this.rn) throw new Error(`node ${this.id} is down`);
    return this.rn;
  }
}

interface InFlight {
  m: Message;
  at: number;
  seq: number;
}

export class SimNetwork {
  now = 0;
  private seq = 0;
  queue: InFlight[] = [];
  dropRate = 0;
  dupRate = 0;
  /** extra delay: each message takes 1 + floor(rand * maxExtraDelay) time units */
  maxExtraDelay = 0;
  /** node -> partition group; nodes in different groups cannot talk */
  private groups = new Map<NodeId, number>();
  /** directed links cut explicitly ("a->b") */
  private cut = new Set<string>();
  /** snapshot delivery outcomes for the sender's host to report (the transport's job) */
  snapshotReports: { from: NodeId; to: NodeId; ok: boolean }[] = [];
  /** a test hook: a message for which it returns false is dropped */
  filter: ((m: Message) => boolean) | undefined;
  /** when set, every message handed to the network is appended here */
  log: Message[] | undefined;
  /** a test hook: extra time units a message spends in flight (e.g. a forward held up for a long time) */
  extraDelay: ((m: Message) => number) | undefined;
  /** report snapshot delivery outcomes to the sender, as a transport should */
  reportSnapshots = true;
  /** messages handed to the network, by type (for tests and coverage statistics) */
  readonly sentByType = new Map<Message['type'], number>();

  constructor(private readonly rand: () => number) {}

  partition(groups: NodeId[][]): void {
    this.groups.clear();
    groups.forEach((g, i) => g.forEach((id) => this.groups.set(id, i)));
  }

  cutLink(a: NodeId, b: NodeId): void {
    this.cut.add(`${a}->${b}`);
    this.cut.add(`${b}->${a}`);
  }

  heal(): void {
    this.groups.clear();
    this.cut.clear();
  }

  blocked(from: NodeId, to: NodeId): boolean {
    if (this.cut.has(`${from}->${to}`)) return true;
    const gf = this.groups.get(from);
    const gt = this.groups.get(to);
    if (gf === undefined && gt === undefined) return false;
    return gf !== gt;
  }

  send(m: Message): void {
    this.sentByType.set(m.type, (this.sentByType.get(m.type) ?? 0) + 1);
    this.log?.push(m);
    if (this.blocked(m.from, m.to) || (this.filter !== undefined && !this.filter(m)) || this.rand() < this.dropRate) {
      this.dropped(m);
      return;
    }
    const copies = this.rand() < this.dupRate ? 2 : 1;
    for (let i = 0; i < copies; i++) {
      const delay = 1 + Math.floor(this.rand() * this.maxExtraDelay) + (this.extraDelay?.(m) ?? 0);
      this.queue.push({ m, at: this.now + delay, seq: this.seq++ });
    }
  }

  dropped(m: Message): void {
    if (m.type === 'installSnapshot' && this.reportSnapshots) this.snapshotReports.push({ from: m.from, to: m.to, ok: false });
  }

  /** remove and return the messages due by `now` (all of them when `all`), in delivery order */
  takeDue(all = false): Message[] {
    const due = all ? this.queue : this.queue.filter((f) => f.at <= this.now);
    this.queue = all ? [] : this.queue.filter((f) => f.at > this.now);
    due.sort((a, b) => a.at - b.at || a.seq - b.seq);
    return due.map((f) => f.m);
  }
}

export class Sim {
  readonly rand: () => number;
  readonly net: SimNetwork;
  readonly nodes = new Map<NodeId, SimNode>();
  readonly cfg: Required<SimConfig>;
  /** term -> the node that was leader in it (election safety) */
  readonly leaders = new Map<number, NodeId>();
  /** index -> committed entry key and the lowest term of a node seen knowing it committed */
  readonly committed = new Map<number, { key: string; term: number }>();
  /** index -> applied entry key, over all nodes (state machine safety) */
  readonly appliedAt = new Map<number, string>();
  /** the membership changes applied anywhere, by index (hex data): checkDurable's configurations */
  private readonly confChangesAt = new Map<number, string>();
  private proposalSeq = 0;
  /** a host hook: called for every entry a node applies, in order (test/raft/proposer-host.ts) */
  onApply: ((n: SimNode, e: AppliedEntry) => void) | undefined;
  /** a host hook: called when a node installs a snapshot from a leader */
  onSnapshot: ((n: SimNode, s: Snapshot) => void) | undefined;

  constructor(cfg: SimConfig) {
    this.cfg = {
      seed: 1,
      electionTick: 10,
      heartbeatTick: 1,
      preVote: true,
      checkQuorum: true,
      maxSizePerMsg: 1024 * 1024,
      maxInflightMsgs: 256,
      serialize: true,
      asyncPersist: 0,
      ...cfg,
    };
    this.rand = mulberry32(this.cfg.seed);
    this.net = new SimNetwork(this.rand);
    for (const id of this.cfg.ids) {
      const n = new SimNode(id, this.cfg.ids);
      n.rn = RawNode.bootstrap(this.raftConfig(id), this.cfg.ids);
      this.nodes.set(id, n);
    }
    this.settle();
  }

  raftConfig(id: NodeId): RaftConfig {
    const seed = Math.floor(this.rand() * 2 ** 32);
    return {
      id,
      electionTick: this.cfg.electionTick,
      heartbeatTick: this.cfg.heartbeatTick,
      preVote: this.cfg.preVote,
      checkQuorum: this.cfg.checkQuorum,
      maxSizePerMsg: this.cfg.maxSizePerMsg,
      maxInflightMsgs: this.cfg.maxInflightMsgs,
      random: mulberry32(seed),
    };
  }

  node(id: NodeId): SimNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  upNodes(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.up);
  }

  // ------------------------------------------------------------ the host loop

  /** Run one node's Ready/advance cycle(s) until it has nothing more to do. */
  processReady(n: SimNode): boolean {
    let did = false;
    if (n.rn && n.persisting) {
      // the host is writing a Ready: what may leave meanwhile leaves now
      const now = n.rn.takeMessagesNow();
      for (const m of now) this.net.send(m);
      // committed entries already on disk apply now (RawNode.takeCommittedNow)
      const committed = n.rn.takeCommittedNow();
      for (const e of committed) this.apply(n, e);
      if (committed.length > 0) this.recordCommitted(n);
      return now.length > 0 || committed.length > 0;
    }
    for (let guard = 0; n.rn && n.rn.hasReady(); guard++) {
      if (guard > 10_000) throw new Error(`node ${n.id}: Ready loop does not converge`);
      did = true;
      const rn = n.rn;
      const rd = rn.ready()!;
      if (this.cfg.asyncPersist > 0 && this.rand() < this.cfg.asyncPersist) {
        // as the driver does: the early messages leave before the write completes
        for (const m of rd.sendBeforePersist) this.net.send(m);
        // committed entries on disk before this write (not rewritten by it) apply while it runs
        n.appliedEarlyTo = 0;
        if (!rd.snapshot) {
          const durableTo = Math.min((n.disk.snapshot?.metadata.index ?? 0) + n.disk.entries.length, (rd.entries[0]?.index ?? Infinity) - 1);
          for (const e of rd.committedEntries) {
            if (e.index > durableTo) break;
            this.apply(n, e);
            n.appliedEarlyTo = e.index;
          }
        }
        n.persisting = rd;
        n.persistingTerm = rn.raft.term;
        return did;
      }
      if (!this.finishReady(n, rd, [])) return did;
    }
    return did;
  }

  /** the write of a node's in-progress Ready completes (its other messages leave, entries apply) */
  completePersist(n: SimNode): void {
    const rd = n.persisting;
    if (!rd || !n.rn) return;
    n.persisting = undefined;
    this.finishReady(n, rd, rd.sendBeforePersist, n.appliedEarlyTo, n.persistingTerm);
  }

  /** persist, send (but `sent`), apply and advance; false when the node crashed */
  private finishReady(n: SimNode, rd: Ready, sent: Message[], appliedTo = 0, term = n.rn!.raft.term): boolean {
    const rn = n.rn!;
    this.persist(n, rd);
    if (n.crashAfterNextPersist) {
      // crash after the disk write, before anything (else) was sent or applied
      n.crashAfterNextPersist = false;
      this.crash(n.id);
      return false;
    }
    if (rd.softState?.role === 'leader') this.recordLeader(n.id, term);
    for (const m of rd.messages) if (!sent.includes(m)) this.net.send(m);
    if (rd.snapshot) this.applySnapshot(n, rd.snapshot);
    for (const e of rd.committedEntries) if (e.index > appliedTo) this.apply(n, e);
    for (const rs of rd.readStates) n.reads.set(rs.context, rs.index);
    rn.advance(rd);
    this.recordCommitted(n);
    return true;
  }

  private persist(n: SimNode, rd: Ready): void {
    const d = n.disk;
    if (rd.snapshot) {
      d.snapshot = rd.snapshot;
      d.entries = [];
    }
    if (rd.entries.length > 0) {
      const first = rd.entries[0]!.index;
      const base = d.snapshot?.metadata.index ?? 0;
      if (first > base + d.entries.length + 1) throw new InvariantViolation(`node ${n.id}: persisted log gap at ${first}`);
      d.entries = d.entries.slice(0, Math.max(0, first - base - 1)).concat(rd.entries);
    }
    if (rd.hardState) d.hardState = { ...rd.hardState };
  }

  private applySnapshot(n: SimNode, s: Snapshot): void {
    const sm = unpack(s.data) as AppliedEntry[];
    for (const e of sm) this.checkApplied(n, e);
    n.sm = sm;
    n.appliedIndex = s.metadata.index;
    this.onSnapshot?.(n, s);
  }

  private apply(n: SimNode, e: Entry): void {
    if (e.index !== n.appliedIndex + 1) {
      throw new InvariantViolation(`node ${n.id}: applied ${e.index} after ${n.appliedIndex}`);
    }
    const a: AppliedEntry = { index: e.index, term: e.term, type: e.type, data: hex(e.data) };
    this.checkApplied(n, a);
    this.checkDurable(n, e);
    n.sm.push(a);
    n.appliedIndex = e.index;
    this.onApply?.(n, a);
  }

  /** state machine safety: no two nodes apply different entries at one index */
  private checkApplied(n: SimNode, a: AppliedEntry): void {
    const key = entryKey(a);
    const prev = this.appliedAt.get(a.index);
    if (prev !== undefined && prev !== key) {
      throw new InvariantViolation(`state machine safety: node ${n.id} applied ${key} at ${a.index}, another node applied ${prev}`);
    }
    this.appliedAt.set(a.index, key);
    if (a.type === 'confChange') this.confChangesAt.set(a.index, a.data);
    const c = this.committed.get(a.index);
    if (c && c.key !== key) throw new InvariantViolation(`node ${n.id} applied ${key} at ${a.index} but ${c.key} was committed`);
  }

  /**
   * Durability: an entry is applied only once it is on the disks of a majority
   * (of the voters now or of those at its index; single-server changes overlap):
   * the commit index counts durable copies only, though a leader may apply
   * before its own write ends (docs/raft.md "Committing on a quorum of durable
   * copies"). The bootstrap entries (term 1) are written by each member alone.
   */
  private checkDurable(n: SimNode, e: Entry): void {
    if (e.term <= 1) return;
    const onDisk = (id: NodeId): boolean => {
      const d = this.nodes.get(id)?.disk;
      if (!d) return false;
      const base = d.snapshot?.metadata.index ?? 0;
      if (e.index <= base) return true; // a snapshot holds committed entries only
      return d.entries[e.index - base - 1]?.term === e.term;
    };
    // the configurations after the last two membership changes at or before the entry (one
    // change pending at a time, in effect once applied: the entry was committed under one of
    // them), from what the nodes applied (committed, the same everywhere)
    const changes = [...this.confChangesAt.entries()].filter(([i]) => i <= e.index).sort((a, b) => a[0] - b[0]);
    const configs: NodeId[][] = [];
    let voters = new Set<NodeId>();
    for (const [, data] of changes) {
      const cc = decodeConfChange(Buffer.from(data, 'hex'));
      voters = new Set(voters);
      if (cc.type === 'addNode') voters.add(cc.nodeId);
      else voters.delete(cc.nodeId);
      configs.push([...voters]);
    }
    const majority = (v: NodeId[]): boolean => v.filter(onDisk).length * 2 > v.length;
    if (!configs.slice(-2).some(majority)) {
      throw new InvariantViolation(`durability: node ${n.id} applied ${e.index} (term ${e.term}) on the disks of no majority (configurations ${configs.slice(-2).map((v) => v.join(',')).join(' / ')}; on ${[...this.nodes.keys()].filter(onDisk)})`);
    }
  }

  private recordLeader(id: NodeId, term: number): void {
    const prev = this.leaders.get(term);
    if (prev !== undefined && prev !== id) {
      throw new InvariantViolation(`election safety: ${prev} and ${id} were both leader in term ${term}`);
    }
    this.leaders.set(term, id);
  }

  /** remember every entry a node knows committed (with the node's term, for leader completeness) */
  private recordCommitted(n: SimNode): void {
    const r = n.raw.raft;
    // a leader counts its own unpersisted entries towards commitment but
    // neither applies nor announces them before they are durable: what it
    // "knows committed" is capped at its last persisted index
    const known = Math.min(r.log.committed, r.log.unstableFrom - 1);
    for (let i = Math.max(r.log.firstIndex(), 1); i <= known; i++) {
      const e = r.log.entry(i)!;
      const key = entryKey({ term: e.term, type: e.type, data: hex(e.data) });
      const c = this.committed.get(i);
      if (c === undefined) this.committed.set(i, { key, term: r.term });
      else if (c.key !== key) throw new InvariantViolation(`node ${n.id} has ${key} committed at ${i}, known committed: ${c.key}`);
      else if (r.term < c.term) c.term = r.term;
    }
  }

  /** process every node's Ready and deliver snapshot reports until quiet */
  settle(): void {
    for (let round = 0; ; round++) {
      if (round > 10_000) throw new Error('settle does not converge');
      let did = false;
      for (const n of this.nodes.values()) if (this.processReady(n)) did = true;
      const reports = this.net.snapshotReports;
      this.net.snapshotReports = [];
      for (const rep of reports) {
        const s = this.nodes.get(rep.from);
        if (s?.rn) {
          s.rn.reportSnapshot(rep.to, rep.ok);
          did = true;
        }
      }
      if (!did) break;
    }
  }

  private deliver(m: Message): void {
    const n = this.nodes.get(m.to);
    if (!n?.rn) {
      this.net.dropped(m);
      return;
    }
    const copy = this.cfg.serialize ? (unpack(pack(m)) as Message) : m;
    n.rn.step(copy);
    if (m.type === 'installSnapshot' && this.net.reportSnapshots) this.net.snapshotReports.push({ from: m.from, to: m.to, ok: true });
  }

  // ------------------------------------------------------------ driving

  /** advance network time by one unit and deliver what is due */
  deliverDue(): void {
    this.net.now++;
    // in-progress writes complete after a random number of time steps
    for (const n of this.nodes.values()) if (n.persisting && this.rand() < 0.5) this.completePersist(n);
    for (const m of this.net.takeDue()) this.deliver(m);
    this.settle();
  }

  /** deliver every message in flight (ignoring delays) until none is left; no ticks */
  stabilize(maxRounds = 1000): void {
    for (let i = 0; i < maxRounds; i++) {
      this.settle();
      for (const n of this.nodes.values()) this.completePersist(n);
      this.settle();
      const ms = this.net.takeDue(true);
      if (ms.length === 0 && ![...this.nodes.values()].some((n) => n.persisting && n.rn)) return;
      for (const m of ms) this.deliver(m);
    }
    throw new Error('stabilize: messages still flowing');
  }

  tick(ids?: NodeId[]): void {
    for (const n of this.nodes.values()) {
      if (n.rn && (!ids || ids.includes(n.id))) n.rn.tick();
    }
    this.settle();
  }

  /** one time step: deliver due messages, then tick every live node */
  step(): void {
    this.deliverDue();
    this.tick();
    this.checkInvariants();
  }

  run(steps: number): void {
    for (let i = 0; i < steps; i++) this.step();
  }

  /** step until pred holds (checked before each step); returns whether it did */
  runUntil(pred: () => boolean, maxSteps = 1000): boolean {
    for (let i = 0; i < maxSteps; i++) {
      if (pred()) return true;
      this.step();
    }
    return pred();
  }

  /** the live leader with the highest term, if any */
  leader(): NodeId | undefined {
    let best: SimNode | undefined;
    for (const n of this.upNodes()) {
      const r = n.raw.raft;
      if (r.role === 'leader' && (!best || r.term > best.raw.raft.term)) best = n;
    }
    return best?.id;
  }

  /** a leader that a majority of the live nodes follow in its term */
  stableLeader(): NodeId | undefined {
    const l = this.leader();
    if (!l) return undefined;
    const term = this.node(l).raw.raft.term;
    const voters = this.node(l).raw.raft.voters;
    const followers = this.upNodes().filter((n) => n.raw.raft.lead === l && n.raw.raft.term === term && voters.has(n.id));
    return followers.length * 2 > voters.size ? l : undefined;
  }

  /** propose on a node; returns false when the proposal was dropped at once */
  propose(id: NodeId, data: string | Uint8Array = `p${++this.proposalSeq}`): boolean {
    const n = this.node(id);
    if (!n.rn) return false;
    try {
      n.rn.propose(typeof data === 'string' ? text(data) : data);
    } catch (err) {
      if (err instanceof ProposalDroppedError) return false;
      throw err;
    }
    this.settle();
    return true;
  }

  proposeConfChange(id: NodeId, cc: ConfChange): boolean {
    try {
      this.node(id).raw.proposeConfChange(cc);
    } catch (err) {
      if (err instanceof ProposalDroppedError) return false;
      throw err;
    }
    this.settle();
    return true;
  }

  /** host-initiated compaction at the node's applied index */
  compact(id: NodeId): boolean {
    const n = this.node(id);
    if (!n.rn) return false;
    const r = n.rn.raft;
    if (n.appliedIndex <= r.log.snapIndex || n.appliedIndex !== r.log.applied) return false;
    // as RaftStore does (after a Ready): not beyond this node's disk (a leader applies
    // entries a quorum of followers made durable before its own write ends)
    if (n.appliedIndex >= r.log.unstableFrom) return false;
    const snap = n.rn.compact(n.appliedIndex, pack(n.sm));
    // the snapshot is durable before the log prefix is dropped
    n.disk.snapshot = snap;
    n.disk.entries = n.disk.entries.filter((e) => e.index > snap.metadata.index);
    return true;
  }

  crash(id: NodeId): void {
    const n = this.node(id);
    n.rn = undefined;
    n.crashAfterNextPersist = false;
    // a write in progress is lost (its early messages may have left)
    n.persisting = undefined;
  }

  /**
   * Restart from the simulated disk; the state machine is rebuilt from the
   * snapshot. As RaftStore.start does: an initial member whose disk is empty
   * (it crashed before its first Ready, which holds the bootstrap entries,
   * was written) bootstraps again. Restarting it as a node with no
   * configuration instead would let it learn its membership from a prefix of
   * entries 1..n — "addNode <itself>" alone makes it a one-voter cluster that
   * elects itself (docs/raft.md "A crash before the bootstrap entries are written").
   */
  restart(id: NodeId): void {
    const n = this.node(id);
    if (n.rn || n.stopped) return;
    const d = n.disk;
    n.rn =
      diskEmpty(d) && n.initialVoters
        ? RawNode.bootstrap(this.raftConfig(id), n.initialVoters)
        : new RawNode(this.raftConfig(id), { hardState: { ...d.hardState }, snapshot: d.snapshot, entries: [...d.entries] });
    n.sm = d.snapshot ? (unpack(d.snapshot.data) as AppliedEntry[]) : [];
    n.appliedIndex = d.snapshot?.metadata.index ?? 0;
    n.reads.clear();
    this.settle();
  }

  /** a brand-new node that will join through a conf change */
  addNode(id: NodeId): SimNode {
    if (this.nodes.has(id)) throw new Error(`node ${id} exists`);
    const n = new SimNode(id);
    n.rn = new RawNode(this.raftConfig(id));
    this.nodes.set(id, n);
    return n;
  }

  /** take a node out of the simulation for good (it was removed from the cluster) */
  stop(id: NodeId): void {
    this.crash(id);
    this.node(id).stopped = true;
  }

  /** heal the network, make it reliable and restart every crashed node */
  healAll(): void {
    this.net.heal();
    this.net.dropRate = 0;
    this.net.dupRate = 0;
    for (const n of this.nodes.values()) {
      n.crashAfterNextPersist = false;
      if (!n.up && !n.stopped) this.restart(n.id);
    }
  }

  // ------------------------------------------------------------ invariants

  checkInvariants(): void {
    const up = this.upNodes();
    for (const n of up) {
      const r = n.raw.raft;
      if (r.role === 'leader') {
        this.recordLeader(n.id, r.term);
        this.checkLeaderCompleteness(n);
      }
      if (r.log.committed > r.log.lastIndex()) throw new InvariantViolation(`node ${n.id}: commit beyond last index`);
    }
    for (let i = 0; i < up.length; i++) {
      for (let j = i + 1; j < up.length; j++) this.checkLogMatching(up[i]!, up[j]!);
    }
  }

  /** Raft §5.4: an entry committed in term U is in the log of every leader of a term >= U */
  private checkLeaderCompleteness(n: SimNode): void {
    const r = n.raw.raft;
    for (const [i, c] of this.committed) {
      if (c.term > r.term || i < r.log.snapIndex) continue;
      if (i === r.log.snapIndex) {
        if (!c.key.startsWith(`${r.log.snapTerm}/`)) throw new InvariantViolation(`leader completeness: leader ${n.id} snapshot term differs at ${i}`);
        continue;
      }
      const e = r.log.entry(i);
      const key = e ? entryKey({ term: e.term, type: e.type, data: hex(e.data) }) : '(missing)';
      if (key !== c.key) {
        throw new InvariantViolation(`leader completeness: leader ${n.id} (term ${r.term}) has ${key} at ${i}, committed ${c.key} (term ${c.term})`);
      }
    }
  }

  /** Raft §5.3 log matching: same index and term => identical logs up to there */
  private checkLogMatching(a: SimNode, b: SimNode): void {
    const la = a.raw.raft.log;
    const lb = b.raw.raft.log;
    const lo = Math.max(la.firstIndex(), lb.firstIndex());
    const hi = Math.min(la.lastIndex(), lb.lastIndex());
    let matched = false;
    for (let i = hi; i >= lo; i--) {
      const ea = la.entry(i)!;
      const eb = lb.entry(i)!;
      if (!matched && ea.term === eb.term) matched = true;
      if (matched && (ea.term !== eb.term || ea.type !== eb.type || hex(ea.data) !== hex(eb.data))) {
        throw new InvariantViolation(`log matching: ${a.id} and ${b.id} agree on a later entry but differ at ${i}`);
      }
    }
  }

  /** liveness: every committed entry is applied on every live node (of `ids`) */
  allApplied(ids?: NodeId[]): boolean {
    const maxCommitted = Math.max(0, ...this.committed.keys());
    for (const n of this.upNodes()) {
      if (ids && !ids.includes(n.id)) continue;
      if (n.appliedIndex < maxCommitted) return false;
    }
    return true;
  }

  /** every live node's (of `ids`) state machine holds exactly the committed entries (throws otherwise) */
  checkStateMachines(ids?: NodeId[]): void {
    for (const n of this.upNodes()) {
      if (ids && !ids.includes(n.id)) continue;
      for (const a of n.sm) {
        const c = this.committed.get(a.index);
        if (c && c.key !== entryKey(a)) throw new InvariantViolation(`node ${n.id}: state machine differs at ${a.index}`);
      }
      for (const [i, c] of this.committed) {
        const a = n.sm.find((x) => x.index === i);
        if (!a) throw new InvariantViolation(`node ${n.id}: committed entry ${i} (${c.key}) not applied`);
      }
    }
  }

  /** data (as text) of the normal entries a node applied, in order */
  appliedData(id: NodeId): string[] {
    return this.node(id)
      .sm.filter((a) => a.type === 'normal' && a.data.length > 0)
      .map((a) => Buffer.from(a.data, 'hex').toString('utf8'));
  }
}
