// kube-scheduler's DefaultPreemption (v1.32, pkg/scheduler/framework/plugins/
// defaultpreemption and framework/preemption), the decisions only, pure: which
// lower-priority pods of a node to remove so the preemptor fits (as few as
// possible, the most important reprieved first, PodDisruptionBudget-violating
// ones before the others), which candidate node to take, and kube's messages.
// scheduler.ts feeds it from the informers and carries the decision out.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { budgetSelects } from '../../registry/kinds/pod-eviction.js';
import { type FilterStatus, type NodeState, account, cloneState, filterNode, fitErrorMessage, podRequests } from './fit.js';

/** corev1helpers.PodPriority: `spec.priority`, 0 when unset */
export function podPriority(pod: ApiObject): number {
  const p = (pod.spec as { priority?: unknown } | undefined)?.priority;
  return typeof p === 'number' ? p : 0;
}

/** a pod's start time in ms; kube's GetPodStartTime takes "now" for a pod not started, so it sorts last */
function startTime(pod: ApiObject): number {
  const t = (pod.status as { startTime?: unknown } | undefined)?.startTime;
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

/** util.MoreImportantPod as a sort order: higher priority first, then the longer running */
export function byImportance(a: ApiObject, b: ApiObject): number {
  return podPriority(b) - podPriority(a) || startTime(a) - startTime(b);
}

/** what the victim selection reads of a PodDisruptionBudget */
export interface Budget {
  pdb: ApiObject;
  /** status.disruptionsAllowed */
  allowed: number;
  /** status.disruptedPods: pods the API server already counted */
  disrupted: ReadonlySet<string>;
}

export function budgetOf(pdb: ApiObject): Budget {
  const st = (pdb.status ?? {}) as { disruptionsAllowed?: unknown; disruptedPods?: unknown };
  const disrupted = st.disruptedPods && typeof st.disruptedPods === 'object' ? Object.keys(st.disruptedPods) : [];
  return { pdb, allowed: typeof st.disruptionsAllowed === 'number' ? st.disruptionsAllowed : 0, disrupted: new Set(disrupted) };
}

/** a selector that selects something: kube's scheduler reads a nil or empty one as matching nothing */
function hasSelector(pdb: ApiObject): boolean {
  const sel = (pdb.spec as { selector?: { matchLabels?: object; matchExpressions?: unknown[] } } | undefined)?.selector;
  return !!sel && (Object.keys(sel.matchLabels ?? {}).length > 0 || (sel.matchExpressions ?? []).length > 0);
}

/**
 * filterPodsWithPDBViolation: splits `pods` (order kept) into those whose
 * removal would take some matching budget below zero and the others; each
 * matching budget's allowance is spent in the order given, a pod the budget
 * already lists in disruptedPods spends nothing
 */
export function splitByBudgets(pods: readonly ApiObject[], budgets: readonly Budget[]): { violating: ApiObject[]; nonViolating: ApiObject[] } {
  const left = budgets.map((b) => b.allowed);
  const violating: ApiObject[] = [];
  const nonViolating: ApiObject[] = [];
  for (const pod of pods) {
    const labels = (pod.metadata?.labels ?? {}) as Record<string, JSONValue>;
    let violated = false;
    if (Object.keys(labels).length > 0) {
      budgets.forEach((b, i) => {
        if (b.pdb.metadata?.namespace !== pod.metadata?.namespace || !hasSelector(b.pdb) || !budgetSelects(b.pdb, labels)) return;
        if (b.disrupted.has(pod.metadata?.name ?? '')) return;
        if (--left[i]! < 0) violated = true;
      });
    }
    (violated ? violating : nonViolating).push(pod);
  }
  return { violating, nonViolating };
}

export interface Victims {
  /** by importance, the most important first */
  pods: ApiObject[];
  /** how many of them a budget does not allow to go */
  pdbViolations: number;
}

export type NodeVictims = { victims: Victims } | { status: FilterStatus };

/**
 * SelectVictimsOnNode: `node` is the node as the filters see it (the pods
 * bound there and the pods of at least the preemptor's priority nominated to
 * it), `pods` the pods bound there. Every pod of lower priority is removed; if
 * the preemptor then fits, they are put back one by one, the most important
 * first — the budget-violating ones, then the others — and those after which
 * it no longer fits are the victims.
 */
export function selectVictims(preemptor: ApiObject, node: NodeState, pods: readonly ApiObject[], budgets: readonly Budget[]): NodeVictims {
  const priority = podPriority(preemptor);
  const potential = pods.filter((p) => podPriority(p) < priority).sort(byImportance);
  if (potential.length === 0) return { status: { reasons: ['No preemption victims found for incoming pod'], resolvable: false } };
  const state = cloneState(node);
  for (const p of potential) account(state, p, -1);
  const req = podRequests(preemptor);
  const without = filterNode(preemptor, state, req);
  if (without.reasons.length > 0) return { status: without };
  const { violating, nonViolating } = splitByBudgets(potential, budgets);
  const victims: ApiObject[] = [];
  let pdbViolations = 0;
  const reprieve = (p: ApiObject): boolean => {
    account(state, p, 1);
    if (filterNode(preemptor, state, req).reasons.length === 0) return true;
    account(state, p, -1);
    victims.push(p);
    return false;
  };
  for (const p of violating) if (!reprieve(p)) pdbViolations++;
  for (const p of nonViolating) reprieve(p);
  if (violating.length > 0 && nonViolating.length > 0) victims.sort(byImportance);
  return { victims: { pods: victims, pdbViolations } };
}

export interface Candidate {
  node: string;
  victims: Victims;
}

/**
 * pickOneNodeForPreemption: fewest budget violations, then the lowest
 * highest-priority victim, the smallest sum of priorities (each shifted by
 * 2^31 so negative priorities do not favour more victims), the fewest
 * victims, the latest start among the highest-priority victims; then the
 * first candidate
 */
export function pickCandidate(candidates: readonly Candidate[]): Candidate | undefined {
  const scores: ((c: Candidate) => number)[] = [
    (c) => -c.victims.pdbViolations,
    (c) => -podPriority(c.victims.pods[0]!),
    (c) => -c.victims.pods.reduce((s, p) => s + podPriority(p) + 2 ** 31, 0),
    (c) => -c.victims.pods.length,
    (c) => {
      const top = podPriority(c.victims.pods[0]!);
      const earliest = Math.min(...c.victims.pods.filter((p) => podPriority(p) === top).map(startTime));
      return earliest === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : earliest;
    },
  ];
  let left = candidates.filter((c) => c.victims.pods.length > 0);
  for (const score of scores) {
    if (left.length <= 1) break;
    const best = Math.max(...left.map(score));
    left = left.filter((c) => score(c) === best);
  }
  return left[0];
}

/** DefaultPreemptionArgs' defaults: dry-run at least 10% of the nodes, at least 100 */
const MIN_CANDIDATE_NODES_PERCENTAGE = 10;
const MIN_CANDIDATE_NODES_ABSOLUTE = 100;

/** calculateNumCandidates: how many candidates the dry run looks for */
export function numCandidates(potentialNodes: number): number {
  return Math.min(potentialNodes, Math.max(MIN_CANDIDATE_NODES_ABSOLUTE, Math.floor((potentialNodes * MIN_CANDIDATE_NODES_PERCENTAGE) / 100)));
}

export interface PreemptionNode {
  state: NodeState;
  /** the pods bound to it that hold resources */
  pods: readonly ApiObject[];
}

export type Preemption = { candidate: Candidate } | { message: string };

/**
 * Evaluator.Preempt's search: the nodes that failed for a reason removing pods
 * can resolve are dry-run from `offset` on (kube starts at a random node),
 * until enough candidates are found with at least one that violates no
 * budget (`random` picks the first); the best is picked. Without candidates, kube's message: every node
 * looked at with its reason, the others "Preemption is not helpful for
 * scheduling".
 */
export function findPreemption(preemptor: ApiObject, nodes: readonly PreemptionNode[], statuses: ReadonlyMap<string, FilterStatus>, budgets: readonly Budget[], random: () => number): Preemption {
  const potential = nodes.filter((n) => statuses.get(n.state.node.metadata?.name ?? '')?.resolvable === true);
  const want = numCandidates(potential.length);
  const offset = Math.floor(random() * potential.length);
  const nonViolating: Candidate[] = [];
  const violating: Candidate[] = [];
  const looked = new Map<string, FilterStatus>();
  for (let i = 0; i < potential.length; i++) {
    const n = potential[(offset + i) % potential.length]!;
    const name = n.state.node.metadata?.name ?? '';
    const out = selectVictims(preemptor, n.state, n.pods, budgets);
    if ('status' in out) {
      looked.set(name, out.status);
      continue;
    }
    (out.victims.pdbViolations === 0 ? nonViolating : violating).push({ node: name, victims: out.victims });
    if (nonViolating.length > 0 && nonViolating.length + violating.length >= want) break;
  }
  const candidate = pickCandidate([...nonViolating, ...violating]);
  if (candidate) return { candidate };
  const reasons = nodes.flatMap((n) => looked.get(n.state.node.metadata?.name ?? '')?.reasons ?? ['Preemption is not helpful for scheduling']);
  return { message: fitErrorMessage(nodes.length, reasons) };
}

/** a pod on its way out because the scheduler preempted it (kube's podTerminatingByPreemption) */
export function terminatingByPreemption(pod: ApiObject): boolean {
  if (!pod.metadata?.deletionTimestamp) return false;
  const conds = ((pod.status as { conditions?: unknown } | undefined)?.conditions ?? []) as { type?: string; status?: string; reason?: string }[];
  const c = Array.isArray(conds) ? conds.find((x) => x.type === 'DisruptionTarget') : undefined;
  return c?.status === 'True' && c.reason === 'PreemptionByScheduler';
}

/**
 * PodEligibleToPreemptOthers: not with `preemptionPolicy: Never`; not while a
 * lower-priority pod it preempted on its nominated node is still terminating
 * (unless the filters ruled that node out for good). The message is kube's.
 */
export function eligibleToPreempt(pod: ApiObject, nominated: { status?: FilterStatus; pods: readonly ApiObject[] } | undefined): string | undefined {
  if ((pod.spec as { preemptionPolicy?: unknown } | undefined)?.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
  if (!nominated || nominated.status?.resolvable === false) return undefined;
  const priority = podPriority(pod);
  if (nominated.pods.some((p) => podPriority(p) < priority && terminatingByPreemption(p))) return 'not eligible due to a terminating pod on the nominated node.';
  return undefined;
}
