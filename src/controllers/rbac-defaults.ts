// Creates and reconciles the default roles and bindings (spec 001 §5.14) on
// the leader at every start — the ClusterRoles and ClusterRoleBindings, then
// the Roles and RoleBindings of the system and public namespaces, the same
// way, as kube's storage_rbac.go does: a missing object is created; an existing one
// gets the default rules it lacks (a default rule not covered by its current
// rules is appended), the aggregation selectors it lacks, the subjects it
// lacks and the bootstrap labels/annotations; nothing is removed. An object
// annotated `rbac.authorization.<label domain>/autoupdate: "false"` is left alone.
// A binding whose roleRef differs is deleted and recreated (roleRef is
// immutable), as kube's reconciler does.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import type { DefaultClusterRole, DefaultClusterRoleBinding, DefaultPolicy, DefaultRole, DefaultRoleBinding } from '../auth/authz/rbac/bootstrap-policy.js';
import { uncovered } from '../auth/authz/rbac/escalation.js';
import { rulesOf } from '../auth/authz/rbac/rules.js';
import { type Clock, systemClock } from '../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from './runtime/index.js';

export interface RbacDefaultsOptions {
  /** the store the informers follow (runtime/informer-factory.ts) */
  store: InformerSource;
  clock?: Clock;
  policy: DefaultPolicy;
  autoupdateAnnotation: string;
  clusterRoles: () => GenericStore;
  clusterRoleBindings: () => GenericStore;
  roles: () => GenericStore;
  roleBindings: () => GenericStore;
  log?: (msg: string) => void;
}

type Json = Record<string, unknown>;
type Subjectish = { kind?: unknown; namespace?: unknown; name?: unknown };

/** one of the four kinds: where it is stored and its informer's cache */
interface Target {
  store: () => GenericStore;
  cache: () => Informer | undefined;
}

export class RbacDefaultsController extends LoopController {
  private run?: Promise<void>;
  private stopped = false;
  /** holds the informers of a start; the reconciliation is one pass, not a queue of keys */
  protected readonly loop: ControllerLoop;
  private readonly informers = new Map<() => GenericStore, Informer>();

  constructor(private readonly o: RbacDefaultsOptions) {
    super();
    this.loop = new ControllerLoop(o.store, { name: 'rbac defaults', clock: o.clock ?? systemClock, log: o.log });
  }

  /** whether the last start's reconciliation finished without an error (readiness) */
  done = false;

  start(): void {
    this.stopped = false;
    this.done = false;
    if (!this.loop.running) {
      this.loop.begin(async () => {});
      for (const store of [this.o.clusterRoles, this.o.clusterRoleBindings, this.o.roles, this.o.roleBindings]) {
        this.informers.set(store, this.loop.inform(store().rangeKeys('')));
      }
    }
    this.run = this.reconcileAll().then(
      () => {
        this.done = !this.stopped;
      },
      (e) => {
        // retried, as a failed write is likely a store that is not available yet
        this.o.log?.(`rbac defaults: ${(e as Error).message}; retrying`);
        this.loop.clock.setTimeout(() => {
          if (!this.stopped && !this.done) this.start();
        }, 1000);
      },
    );
  }

  stop(): void {
    this.stopped = true;
    this.loop.end();
  }

  /** resolves once the last start's reconciliation finished (it never rejects) */
  override settled(): Promise<void> {
    return this.run ?? Promise.resolve();
  }

  async reconcileAll(): Promise<void> {
    // the roles' and bindings' caches are read below (their lists may come in slices)
    if (!(await this.loop.synced())) return;
    const { policy: p, clusterRoles, clusterRoleBindings, roles, roleBindings } = this.o;
    const steps: (() => Promise<void>)[] = [
      ...p.clusterRoles.map((r) => () => this.reconcileRole(r, this.target(clusterRoles))),
      ...p.clusterRoleBindings.map((b) => () => this.reconcileBinding(b, this.target(clusterRoleBindings))),
      ...p.roles.map((r) => () => this.reconcileRole(r, this.target(roles))),
      ...p.roleBindings.map((b) => () => this.reconcileBinding(b, this.target(roleBindings))),
    ];
    for (const step of steps) {
      if (this.stopped) return;
      await this.retry(step);
    }
  }

  private target(store: () => GenericStore): Target {
    return { store, cache: () => this.informers.get(store) };
  }

  private async retry(f: () => Promise<void>): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        return await f();
      } catch (e) {
        // a concurrent create (another member, a user) is reconciled on the next pass
        if (e instanceof StatusError && (e.code === 409 || e.code === 404) && i < 3) continue;
        throw e;
      }
    }
  }

  private optedOut(o: ApiObject): boolean {
    return o.metadata?.annotations?.[this.o.autoupdateAnnotation] === 'false';
  }

  private async reconcileRole(want: DefaultClusterRole | DefaultRole, t: Target): Promise<void> {
    const gs = t.store();
    const ns = want.metadata.namespace ?? '';
    const have = t.cache()?.get(keyOf(want));
    if (!have) {
      await gs.create(ns, structuredClone(want) as unknown as ApiObject, { dryRun: false, manager: 'orch-rbac-defaults' });
      return;
    }
    if (this.optedOut(have)) return;
    await gs.guaranteedUpdate(ns, want.metadata.name, { dryRun: false, manager: 'orch-rbac-defaults' }, (cur) => {
      if (!cur || this.optedOut(cur)) return cur!;
      delete cur.metadata?.resourceVersion;
      mergeMeta(cur, want.metadata);
      if (want.kind === 'ClusterRole' && want.aggregationRule) {
        const agg = ((cur.aggregationRule as Json | undefined) ?? {}) as { clusterRoleSelectors?: unknown[] };
        const have = agg.clusterRoleSelectors ?? [];
        for (const s of want.aggregationRule.clusterRoleSelectors) {
          if (!have.some((h) => JSON.stringify(h) === JSON.stringify(s))) have.push(structuredClone(s));
        }
        cur.aggregationRule = { ...agg, clusterRoleSelectors: have } as ApiObject[string];
      } else {
        const current = rulesOf(cur);
        const add = (want.rules ?? []).filter((r) => uncovered(current, [r]).length > 0);
        if (add.length) cur.rules = [...((cur.rules as unknown[] | undefined) ?? []), ...structuredClone(add)] as ApiObject[string];
      }
      return cur;
    });
  }

  private async reconcileBinding(want: DefaultClusterRoleBinding | DefaultRoleBinding, t: Target): Promise<void> {
    const gs = t.store();
    const ns = want.metadata.namespace ?? '';
    const cur = t.cache()?.get(keyOf(want));
    const create = () => gs.create(ns, structuredClone(want) as unknown as ApiObject, { dryRun: false, manager: 'orch-rbac-defaults' });
    if (!cur) {
      await create();
      return;
    }
    if (this.optedOut(cur)) return;
    const rr = (cur.roleRef ?? {}) as Json;
    if (rr.kind !== want.roleRef.kind || rr.name !== want.roleRef.name || rr.apiGroup !== want.roleRef.apiGroup) {
      this.o.log?.(`rbac defaults: ${want.kind.toLowerCase()} ${keyOf(want)} refers to ${String(rr.kind)}/${String(rr.name)}; recreating it`);
      await gs.delete(ns, want.metadata.name, { dryRun: false });
      await create();
      return;
    }
    await gs.guaranteedUpdate(ns, want.metadata.name, { dryRun: false, manager: 'orch-rbac-defaults' }, (o) => {
      if (!o || this.optedOut(o)) return o!;
      delete o.metadata?.resourceVersion;
      mergeMeta(o, want.metadata);
      const have = ((o.subjects as Subjectish[] | undefined) ?? []).slice();
      const key = (s: Subjectish) => `${String(s.kind)}/${String(s.namespace ?? '')}/${String(s.name)}`;
      for (const s of want.subjects) if (!have.some((h) => key(h) === key(s))) have.push(structuredClone(s));
      o.subjects = have as ApiObject[string];
      return o;
    });
  }
}

/** the informer key: `namespace/name`, or the name of a cluster-scoped object */
function keyOf(o: { metadata: { name: string; namespace?: string } }): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

/** adds the bootstrap labels and annotations that are missing (an operator's values win) */
function mergeMeta(o: ApiObject, want: { labels: Record<string, string>; annotations: Record<string, string> }): void {
  const meta = (o.metadata ??= {});
  meta.labels = { ...want.labels, ...(meta.labels ?? {}) };
  meta.annotations = { ...want.annotations, ...(meta.annotations ?? {}) };
}
