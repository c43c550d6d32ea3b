// POST pods/{name}/binding (kube-apiserver's BindingREST, what a scheduler
// posts): a Binding whose `target` is a Node sets `spec.nodeName` of a pod
// that has none, adds the Binding's annotations and sets the PodScheduled
// condition, in one compare-and-swap (the Binding's uid/resourceVersion are
// preconditions). A pod already bound, being deleted, or with scheduling
// gates is a 409, as kube's assignPod answers. Authorization is
// `create pods/binding` (the request pipeline's).
// The legacy `bindings` resource (POST /api/v1/namespaces/{ns}/bindings,
// kube's LegacyBindingREST, still served by 1.32) is the same write with the
// pod named by the Binding's metadata.name; authorization `create bindings`.

import { StatusError, badRequest, conflict, invalid, notFoundPath } from '../../core/errors.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import { bindingSchema } from '../../machinery/protobuf/messages.js';
import type { Capabilities, CapabilityContext, CapabilityResult, CapabilityStore } from '../capabilities.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { isoSeconds } from './pod-eviction.js';

type Obj = Record<string, JSONValue>;

/** the sub-resource a binding's pod write names: the pod strategy's update rules let it set spec.nodeName */
export const BINDING_SUBRESOURCE = 'binding';

export function bindingCapability(): Capabilities {
  return {
    body: { kind: { kind: 'Binding', apiVersions: ['v1'] } },
    create: (ctx, binding) => {
      if (binding.metadata?.name !== undefined && binding.metadata.name !== ctx.name) throw badRequest('name in URL does not match name in Binding object');
      return bind(ctx, ctx.store(), ctx.name, binding);
    },
  };
}

/** core/v1 `bindings`: create only, the pod named by the body (kube's LegacyBindingREST) */
export function legacyBindingDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'Binding',
    resource: 'bindings',
    singular: 'binding',
    scope: 'Namespaced',
    verbs: ['create'],
    schema: bindingSchema(n),
    strategy: {},
    capabilities: {
      '': {
        create: (ctx, binding) => {
          const pods = ctx.storeOf('', 'v1', 'pods');
          if (!pods) throw notFoundPath();
          // kube's pod store key function: a Binding without a name names no pod
          const name = binding.metadata?.name ?? '';
          if (name === '') throw badRequest('Name parameter required.');
          return bind(ctx, pods, name, binding);
        },
      },
    },
  };
}

async function bind(ctx: CapabilityContext, pods: CapabilityStore, podName: string, binding: ApiObject): Promise<CapabilityResult> {
  const meta = binding.metadata ?? {};
  // kube's create handler: a namespace in the body must be the request's
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== ctx.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const now = (): number => ctx.now();
  const target = ((binding as { target?: unknown }).target ?? {}) as { kind?: unknown; name?: unknown };
  const errs: FieldError[] = [];
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
    errs.push({ field: 'target.kind', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(target.kind)}: supported values: "Node", "<empty>"` });
  }
  if (typeof target.name !== 'string' || target.name === '') errs.push({ field: 'target.name', type: 'FieldValueRequired', message: 'Required value' });
  if (errs.length > 0) throw invalid('Binding', '', podName, errs);
  const node = target.name as string;
  const annotations = meta.annotations ?? {};
  const assignError = (why: string): StatusError => conflict('pods/binding', '', podName, why);
  await pods.guaranteedUpdate(ctx.namespace, podName, { dryRun: ctx.dryRun, manager: 'kube-scheduler', subresource: BINDING_SUBRESOURCE }, (cur) => {
    if (!cur) throw new StatusError(404, 'NotFound', `pods "${podName}" not found`, { name: podName, kind: 'pods' });
    if (meta.uid && meta.uid !== cur.metadata?.uid) {
      throw conflict('pods', '', podName, `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${cur.metadata?.uid ?? ''}`);
    }
    const spec = (cur.spec ?? {}) as { nodeName?: string; schedulingGates?: unknown[] };
    if (cur.metadata?.deletionTimestamp) throw assignError(`pod ${podName} is being deleted, cannot be assigned to a host`);
    if (spec.nodeName) throw assignError(`pod ${podName} is already assigned to node ${JSON.stringify(spec.nodeName)}`);
    if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) throw assignError(`pod ${podName} has non-empty .spec.schedulingGates`);
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
