// The one thing kube-apiserver's API Priority and Fairness configuration
// consumer (apf_controller.go) writes: every FlowSchema's `Dangling` status
// condition, True (reason NotFound) when the PriorityLevelConfiguration it
// names does not exist, False (reason Found) when it does, with kube's
// messages and a new lastTransitionTime whenever status, reason or message
// change. `kubectl get flowschemas` shows it as MISSINGPL. orch's overload
// protection does not read these objects (docs/reliability.md), so nothing
// else is done with them. Leader only, on the controller runtime; queue key:
// a FlowSchema's name. A priority level added or deleted queues every schema,
// as kube digests the whole configuration on any change. Other conditions
// are kept: kube applies the condition alone into a list keyed by type.

import { StatusError } from '../core/errors.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../registry/types.js';
import { nowTimestamp } from '../machinery/meta.js';
import { ControllerLoop, type Informer, type InformerSource, type LeaderGate, type LeadershipSource, LoopController, runWhileLeader } from './runtime/index.js';

/** kube's field manager for the condition */
export const APF_CONSUMER_MANAGER = 'api-priority-and-fairness-config-consumer-v1';

type Condition = Record<string, JSONValue>;

/** the PriorityLevelConfiguration a FlowSchema names */
const levelNameOf = (fs: ApiObject): string =>
  String((fs.spec as { priorityLevelConfiguration?: { name?: unknown } } | undefined)?.priorityLevelConfiguration?.name ?? '');

/** the schema's conditions with its Dangling condition as kube wants it; undefined when it already is */
export function withDanglingCondition(fs: ApiObject, levelExists: boolean, now: string): Condition[] | undefined {
  const level = levelNameOf(fs);
  const want = levelExists
    ? { status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(level)} and it exists` }
    : { status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(level)} but there is no such object` };
  const conditions = ((fs.status as { conditions?: unknown } | undefined)?.conditions ?? []) as Condition[];
  const cur = conditions.find((c) => c.type === 'Dangling');
  if (cur && cur.status === want.status && cur.reason === want.reason && cur.message === want.message) return undefined;
  const next: Condition = { type: 'Dangling', ...want, lastTransitionTime: now };
  return cur ? conditions.map((c) => (c === cur ? next : c)) : [...conditions, next];
}

export interface ApfDanglingOptions {
  store: InformerSource;
  flowSchemas: () => GenericStore;
  priorityLevels: () => GenericStore;
  clock?: Clock;
  log?: (msg: string) => void;
}

export class ApfDanglingController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private schemas: Informer | undefined;
  private levels: Informer | undefined;

  constructor(private readonly o: ApfDanglingOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'apf dangling', clock: this.clock, log: o.log });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.schemas = this.loop.inform(this.o.flowSchemas().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
    });
    const all = (): void => {
      for (const key of this.schemas?.keys() ?? []) this.loop.enqueue(key);
    };
    this.levels = this.loop.inform(this.o.priorityLevels().rangeKeys(''), { add: all, delete: all });
  }

  stop(): void {
    this.loop.end();
    this.schemas = undefined;
    this.levels = undefined;
  }

  private async sync(key: string): Promise<void> {
    const fs = this.schemas?.get(key);
    if (!fs || !this.levels) return;
    const conditions = withDanglingCondition(fs, this.levels.get(levelNameOf(fs)) !== undefined, nowTimestamp(this.clock.now()));
    if (!conditions) return;
    const name = fs.metadata?.name ?? '';
    try {
      // pinned to the schema read: a change meanwhile is a 409, and the queue retries on the newer one
      await this.o.flowSchemas().guaranteedUpdate('', name, { dryRun: false, subresource: 'status', manager: APF_CONSUMER_MANAGER }, (cur) => {
        if (!cur) throw new StatusError(404, 'NotFound', `flowschemas "${name}" not found`);
        return { ...cur, metadata: { ...cur.metadata, resourceVersion: fs.metadata?.resourceVersion ?? '' }, status: { ...((cur.status ?? {}) as Condition), conditions } };
      });
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
  }
}

/** the controller behind the leader gate; undefined when the group is not served (--runtime-config) */
export function startApfDangling(o: Omit<ApfDanglingOptions, 'flowSchemas' | 'priorityLevels' | 'store'> & {
  store: InformerSource & LeadershipSource;
  flowSchemas: () => GenericStore | undefined;
  priorityLevels: () => GenericStore | undefined;
}): LeaderGate | undefined {
  const fs = o.flowSchemas();
  const pl = o.priorityLevels();
  if (!fs || !pl) return undefined;
  const controller = new ApfDanglingController({ ...o, flowSchemas: () => fs, priorityLevels: () => pl });
  return runWhileLeader(o.store, controller, { name: 'apf dangling', log: o.log });
}
