// POST pods/{name}/binding (kube-apiserver's BindingREST, what a scheduler
// posts): a Binding whose `target` is a Node sets `spec.nodeName` of a pod
// that has none, adds the Binding's annotations and sets the PodScheduled
// condition, in one compare-and-swap (the Binding's uid/resourceVersion are
// preconditions). A pod already bound, being deleted, or with scheduling
// gates is a 409, as kube's assignPod answers. Authorization is
// `create pods/binding` (the request pipeline's).

import { StatusError, badRequest, conflict, invalid } from '../../core/errors.js';
import type { Capabilities, CapabilityContext, CapabilityResult } from '../capabilities.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { isoSeconds } from './pod-eviction.js';

type Obj = Record<string, JSONValue>;

export function bindingCapability(): Capabilities {
  return {
    body: { kind: { kind: 'Binding', apiVersions: ['v1'] } },
    create: (ctx, binding) => bind(ctx, binding, () => ctx.now()),
  };
}

async function bind(ctx: CapabilityContext, binding: ApiObject, now: () => number): Promise<CapabilityResult> {
  const meta = binding.metadata ?? {};
  if (meta.name !== undefined && meta.name !== ctx.name) throw badRequest('name in URL does not match name in Binding object');
  const target = ((binding as { target?: unknown }).target ?? {}) as { kind?: unknown; name?: unknown };
  const errs: FieldError[] = [];
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
    errs.push({ field: 'target.kind', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(target.kind)}: supported values: "Node", "<empty>"` });
  }
  if (typeof target.name !== 'string' || target.name === '') errs.push({ field: 'target.name', type: 'FieldValueRequired', message: 'Required value' });
  if (errs.length > 0) throw invalid('Binding', '', ctx.name, errs);
  const node = target.name as string;
  const annotations = meta.annotations ?? {};
  const assignError = (why: string): StatusError => conflict('pods/binding', '', ctx.name, why);
  await ctx.store().guaranteedUpdate(ctx.namespace, ctx.name, { dryRun: ctx.dryRun, manager: 'kube-scheduler' }, (cur) => {
    if (!cur) throw new StatusError(404, 'NotFound', `pods "${ctx.name}" not found`, { name: ctx.name, kind: 'pods' });
    if (meta.uid && meta.uid !== cur.metadata?.uid) {
      throw conflict('pods', '', ctx.name, `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${cur.metadata?.uid ?? ''}`);
    }
    const spec = (cur.spec ?? {}) as { nodeName?: string; schedulingGates?: unknown[] };
    if (cur.metadata?.deletionTimestamp) throw assignError(`pod ${ctx.name} is being deleted, cannot be assigned to a host`);
    if (spec.nodeName) throw assignError(`pod ${ctx.name} is already assigned to node ${JSON.stringify(spec.nodeName)}`);
    if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) throw assignError(`pod ${ctx.name} has non-empty .spec.schedulingGates`);
    (cur.spec as Obj).nodeName = node;
    const m = cur.metadata!;
    if (Object.keys(annotations).length > 0) m.annotations = { ...(m.annotations ?? {}), ...annotations };
    // the Binding's resourceVersion pins the write (guaranteedUpdate answers 409 on a mismatch)
    if (meta.resourceVersion) m.resourceVersion = meta.resourceVersion;
    else delete m.resourceVersion;
    const status = (cur.status ??= {}) as { conditions?: Obj[] };
    const conds = status.conditions ?? [];
    const old = conds.find((c) => c.type === 'PodScheduled');
    const next: Obj = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: old?.status === 'True' && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : isoSeconds(now()) };
    status.conditions = old ? conds.map((c) => (c === old ? next : c)) : [...conds, next];
    return cur;
  });
  return { status: 201, object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
}
