// What the node lifecycle controller wants a Node to look like (spec 002
// §2.1, §3), as a pure function of the stored Node and the node's machine
// (machine.ts): conditions set to Unknown when the node stopped sending
// heartbeats, and the controller's taints — the rest of the object is left
// as it is. The controller (controller.ts) writes the result with a
// compare-and-swap and re-plans on a conflict.

import type { ApiObject } from '../../registry/types.js';
import type { NodeHealthView, ReadyStatus } from './machine.js';
import { type NodeTaintKeys, type Taint, ownedTaintKeys, sameTaint } from './taints.js';

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

/** the conditions kube's controller sets to Unknown (NetworkUnavailable too here: the agent posts it) */
const MARKED = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
export const UNKNOWN_REASON = 'NodeStatusUnknown';
export const UNKNOWN_MESSAGE = 'Node agent stopped posting node status.';
export const NEVER_REASON = 'NodeStatusNeverUpdated';
export const NEVER_MESSAGE = 'Node agent never posted node status.';

export interface PlanInput {
  node: ApiObject;
  view: NodeHealthView;
  keys: NodeTaintKeys;
  /** RFC 3339 (seconds) time of now */
  now: string;
  /** the Ready heartbeat the machine's liveness is based on; Unknown is written only over that one */
  heartbeatSeen: string | undefined;
  /** a token of the zone's limiter is available for a new NoExecute taint */
  mayAddNoExecute: boolean;
  /** every zone fully disrupted: the controller adds no NoExecute taints and removes its own */
  disrupted: boolean;
}

export interface Plan {
  /** the object to write, undefined when nothing changes */
  next?: ApiObject;
  /** conditions were set to Unknown */
  markedUnknown: boolean;
  /** a NoExecute taint is wanted but was held back for want of a token */
  heldNoExecute: boolean;
  /** a new NoExecute taint is added (a token is spent) */
  addsNoExecute: boolean;
}

export function conditionsOf(node: ApiObject): NodeCondition[] {
  const c = (node.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(c) ? (c as NodeCondition[]) : [];
}

export function readyOf(node: ApiObject): { status: ReadyStatus; heartbeat?: string } {
  const r = conditionsOf(node).find((c) => c.type === 'Ready');
  if (!r) return { status: 'None' };
  const s = r.status === 'True' || r.status === 'False' ? r.status : 'Unknown';
  return { status: s, heartbeat: r.lastHeartbeatTime };
}

export function taintsOf(node: ApiObject): Taint[] {
  const t = (node.spec as { taints?: unknown } | undefined)?.taints;
  return Array.isArray(t) ? (t as Taint[]) : [];
}

function markUnknown(conditions: NodeCondition[], now: string, created: string | undefined): { list: NodeCondition[]; changed: boolean } {
  let changed = false;
  const list = conditions.map((c) => {
    if ((MARKED.includes(c.type) || c.type === 'NetworkUnavailable') && c.status !== 'Unknown') {
      changed = true;
      return { ...c, status: 'Unknown', reason: UNKNOWN_REASON, message: UNKNOWN_MESSAGE, lastTransitionTime: now };
    }
    return c;
  });
  for (const type of MARKED) {
    if (list.some((c) => c.type === type)) continue;
    changed = true;
    list.push({ type, status: 'Unknown', reason: NEVER_REASON, message: NEVER_MESSAGE, lastHeartbeatTime: created ?? now, lastTransitionTime: now });
  }
  return { list, changed };
}

export function planNode(i: PlanInput): Plan {
  const { node, view, keys } = i;
  let conditions = conditionsOf(node);
  let markedUnknown = false;
  if (view.unreachable && readyOf(node).heartbeat === i.heartbeatSeen) {
    const m = markUnknown(conditions, i.now, node.metadata?.creationTimestamp);
    if (m.changed) {
      conditions = m.list;
      markedUnknown = true;
    }
  }
  const status = (type: string) => conditions.find((c) => c.type === type)?.status;
  const ready = status('Ready') ?? 'None';
  const current = taintsOf(node);
  const has = (key: string, effect: string) => current.some((t) => t.key === key && t.effect === effect);

  // NoSchedule taints follow the conditions at once (kube's doNoScheduleTaintingPass)
  const want: Taint[] = [];
  if (ready === 'False') want.push({ key: keys.notReady, effect: 'NoSchedule' });
  if (ready === 'Unknown') want.push({ key: keys.unreachable, effect: 'NoSchedule' });
  if (status('MemoryPressure') === 'True') want.push({ key: keys.memoryPressure, effect: 'NoSchedule' });
  if (status('DiskPressure') === 'True') want.push({ key: keys.diskPressure, effect: 'NoSchedule' });
  if (status('PIDPressure') === 'True') want.push({ key: keys.pidPressure, effect: 'NoSchedule' });
  if (status('NetworkUnavailable') === 'True') want.push({ key: keys.networkUnavailable, effect: 'NoSchedule' });
  if ((node.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true) want.push({ key: keys.unschedulable, effect: 'NoSchedule' });

  // NoExecute: unreachable while Ready is Unknown; not-ready once Ready=False has
  // persisted (or the taint is there already: a new leader keeps it)
  let noExecute: string | undefined;
  if (ready === 'Unknown') noExecute = keys.unreachable;
  else if (ready === 'False' && (view.readiness === 'NotReady.Persistent' || has(keys.notReady, 'NoExecute'))) noExecute = keys.notReady;
  let heldNoExecute = false;
  let addsNoExecute = false;
  if (noExecute && !i.disrupted) {
    const owned = ownedTaintKeys(keys);
    const swap = current.some((t) => t.effect === 'NoExecute' && owned.has(t.key));
    if (has(noExecute, 'NoExecute') || swap) want.push({ key: noExecute, effect: 'NoExecute' });
    else if (i.mayAddNoExecute) {
      want.push({ key: noExecute, effect: 'NoExecute' });
      addsNoExecute = true;
    } else heldNoExecute = true;
  }

  const owned = ownedTaintKeys(keys);
  const next: Taint[] = current.filter((t) => !owned.has(t.key) || want.some((w) => sameTaint(w, t)));
  for (const w of want) {
    if (next.some((t) => sameTaint(t, w))) continue;
    next.push(w.effect === 'NoExecute' ? { ...w, timeAdded: i.now } : w);
  }
  const taintsChanged = next.length !== current.length || next.some((t, n) => !sameTaint(t, current[n]!));
  if (!taintsChanged && !markedUnknown) return { markedUnknown: false, heldNoExecute, addsNoExecute: false };
  const out: ApiObject = { ...node, spec: { ...((node.spec ?? {}) as Record<string, unknown>) } as ApiObject['spec'] };
  const spec = out.spec as Record<string, unknown>;
  if (next.length > 0) spec.taints = next;
  else delete spec.taints;
  if (markedUnknown) out.status = { ...((node.status ?? {}) as Record<string, unknown>), conditions } as unknown as ApiObject['status'];
  return { next: out, markedUnknown, heldNoExecute, addsNoExecute: addsNoExecute && taintsChanged };
}
