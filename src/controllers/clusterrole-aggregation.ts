// The ClusterRole aggregation controller (spec 001 §5.14), leader only: a
// ClusterRole with `aggregationRule.clusterRoleSelectors` gets as its rules
// the union (without duplicates, in the order of the source roles' names) of
// the rules of every other ClusterRole matching one of the selectors; its own
// rules are overwritten. Any ClusterRole change re-computes the aggregated
// roles (they are few), so chains (view → edit → admin) settle in a few steps.

import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../registry/types.js';
import { type LabelSelector, matchesLabels } from '../machinery/selectors/labels.js';
import type { Clock } from '../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from './runtime/index.js';

/** the one key of the queue: a pass recomputes every aggregated role (they are few) */
const ALL = 'all';

export class ClusterRoleAggregationController extends LoopController {
  protected readonly loop: ControllerLoop;
  private informer: Informer | undefined;

  constructor(
    store: InformerSource,
    private readonly clusterRoles: () => GenericStore,
    log: (msg: string) => void = () => {},
    clock?: Clock,
  ) {
    super();
    // retried: the next pass recomputes everything from the cache
    this.loop = new ControllerLoop(store, { name: 'clusterrole aggregation', log, clock, baseDelayMs: 200 });
  }

  start(): void {
    this.loop.begin(() => this.sync());
    const kick = (): void => this.loop.enqueue(ALL);
    this.informer = this.loop.inform(this.clusterRoles().rangeKeys(''), { add: kick, update: kick, delete: kick });
    kick();
  }

  stop(): void {
    this.loop.end();
  }

  /** one pass over every aggregated ClusterRole */
  async sync(): Promise<void> {
    const gs = this.clusterRoles();
    const all = this.informer?.list() ?? [];
    all.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    for (const role of all) {
      const selectors = selectorsOf(role);
      if (!selectors) continue;
      const name = role.metadata?.name ?? '';
      const rules: JSONValue[] = [];
      const seen = new Set<string>();
      for (const other of all) {
        if (other.metadata?.name === name) continue;
        if (!selectors.some((s) => matchesLabels(s, other.metadata?.labels))) continue;
        for (const r of (other.rules as JSONValue[] | undefined) ?? []) {
          const k = JSON.stringify(r);
          if (seen.has(k)) continue;
          seen.add(k);
          rules.push(r);
        }
      }
      if (JSON.stringify(role.rules ?? []) === JSON.stringify(rules)) continue;
      await gs.guaranteedUpdate('', name, { dryRun: false, manager: 'clusterrole-aggregation-controller' }, (cur) => {
        if (!cur) return cur!;
        // not pinned to the version read: a concurrent write re-runs this transform on the newer object
        delete cur.metadata?.resourceVersion;
        cur.rules = rules;
        return cur;
      });
    }
  }
}

/** the role's selectors as parsed label selectors; undefined when it does not aggregate */
export function selectorsOf(role: ApiObject): LabelSelector[] | undefined {
  const agg = role.aggregationRule as { clusterRoleSelectors?: unknown } | undefined;
  if (!agg || !Array.isArray(agg.clusterRoleSelectors)) return undefined;
  return agg.clusterRoleSelectors.map((s) => toSelector((s ?? {}) as Record<string, unknown>));
}

/** a metav1 LabelSelector object → requirements; `{}` matches everything, as in kube */
function toSelector(s: Record<string, unknown>): LabelSelector {
  const out: LabelSelector = [];
  const ml = (s.matchLabels ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(ml)) out.push({ key: k, op: '=', values: [String(v)] });
  for (const e of (Array.isArray(s.matchExpressions) ? s.matchExpressions : []) as Record<string, unknown>[]) {
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    const op = String(e.operator ?? '');
    const mapped = op === 'In' ? 'in' : op === 'NotIn' ? 'notin' : op === 'Exists' ? 'exists' : op === 'DoesNotExist' ? '!' : undefined;
    // an unknown operator must match nothing rather than everything
    if (!mapped) return [{ key: String(e.key ?? ''), op: 'in', values: [] }];
    out.push({ key: String(e.key ?? ''), op: mapped, values });
  }
  return out;
}
