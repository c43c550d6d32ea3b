// core/v1 Namespace: cluster-scoped, named by a DNS label; status.phase
// defaults to Active (Terminating once deletion starts). `spec.finalizers`
// (default `kubernetes`) keeps a deleted namespace Terminating until the
// namespace controller has removed its contents (spec 000 §3.1); it is
// changed only through the `finalize` sub-resource, as in Kubernetes.

import { badRequest } from '../../core/errors.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Capabilities } from '../capabilities.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import { column, fieldOf, getString } from './columns.js';
import { atomicList, enumOf, listMap, obj, proto, str, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { SPEC_STATUS_SHAPE } from '../zero-shape.js';

/** `kubernetes.io/metadata.name` with --api-domain k8s.io, else `<domain>/metadata.name` */
export function namespaceNameLabel(apiDomain: string): string {
  return `${apiDomain === 'k8s.io' ? 'kubernetes.io' : apiDomain}/metadata.name`;
}

export function namespaceDefinition(n: SchemaNames): ResourceDefinition {
  const nameLabel = namespaceNameLabel(n.apiDomain);
  return {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    resource: 'namespaces',
    returnDeletedObject: true,
    singular: 'namespace',
    scope: 'Cluster',
    shortNames: ['ns'],
    // kube's namespace REST storage has no DeleteCollection: no `deletecollection` in discovery, and a DELETE of
    // the collection is 405 (a namespace's deletion is one at a time, each through its finalizers)
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status', 'finalize'],
    nameValidation: 'DNS1123Label',
    schema: kindSchema(n, 'Namespace provides a scope for names of namespaced objects.', proto({ spec: 2, status: 3 }, {
      spec: obj('Desired behaviour of the namespace.', proto({ finalizers: 1 }, {
        finalizers: atomicList('Opaque values that must be emptied before the namespace is removed from storage.', { type: 'string' }),
      })),
      status: obj('Observed status of the namespace.', proto({ phase: 1, conditions: 2 }, {
        phase: enumOf('Current lifecycle phase.', ['Active', 'Terminating'], { default: 'Active' }),
        conditions: listMap(
          'Latest observations of the namespace state.',
          obj('One namespace condition.', proto({ type: 1, status: 2, lastTransitionTime: 4, reason: 5, message: 6 }, {
            type: str('Condition type.'),
            status: str('True, False or Unknown.'),
            lastTransitionTime: time('Last status change.'),
            reason: str('Machine-readable reason.'),
            message: str('Human-readable details.'),
          }), ['type', 'status']),
          ['type'],
          'type',
        ),
      }), undefined, { default: {} }),
    })),
    strategy: {
      zeroShape: SPEC_STATUS_SHAPE,
      default(o) {
        const spec = (o.spec ??= {}) as { finalizers?: string[] };
        if (spec.finalizers === undefined) spec.finalizers = [NAMESPACE_FINALIZER];
        // kube's `kubernetes.io/metadata.name` label, always the name (issue #11), on create and update
        const meta = (o.metadata ??= {});
        if (meta.name) (meta.labels ??= {})[nameLabel] = meta.name;
      },
      // kube's namespace strategy PrepareForUpdate: spec.finalizers change only through `finalize`
      prepareForUpdate(o, old, _now, subresource) {
        if (subresource === 'finalize') return;
        const was = (old.spec as { finalizers?: string[] } | undefined)?.finalizers;
        const spec = (o.spec ??= {}) as { finalizers?: string[] };
        if (was === undefined) delete spec.finalizers;
        else spec.finalizers = was.slice();
      },
      extraFinalizers: (o) => finalizersOf(o).slice(),
      prepareForDelete(o) {
        const status = (o.status ??= {}) as { phase?: string };
        status.phase = 'Terminating';
      },
      columns: [column('Status', 'string', (o) => getString(o, 'status', 'phase') ?? '', { description: 'The status of the namespace' })],
      selectableFields: { 'status.phase': fieldOf('status', 'phase') },
    },
    // PUT namespaces/{name}/finalize (the endpoint layer decodes the Namespace body)
    capabilities: { finalize: FINALIZE },
  };
}

/** the `finalize` sub-resource: an update that replaces spec.finalizers and nothing else */
const FINALIZE: Capabilities = {
  // the endpoint layer checked the body's name against the URL (kube's checkName)
  async update(ctx, obj) {
    const wanted = finalizersOf(obj);
    if (!Array.isArray(wanted) || wanted.some((f) => typeof f !== 'string')) throw badRequest('spec.finalizers must be a list of strings');
    const r = await ctx.store().guaranteedUpdate('', ctx.name, { dryRun: ctx.dryRun, subresource: 'finalize' }, (cur) => {
      const next = cur!;
      next.spec = { ...((next.spec as object | undefined) ?? {}), finalizers: [...wanted] };
      // the body's resourceVersion pins the write (a 409 on a mismatch); without one the update is
      // unconditional, as kube's namespace strategy allows: a racing write re-runs this on the newer object
      if (obj.metadata?.resourceVersion) next.metadata!.resourceVersion = obj.metadata.resourceVersion;
      else delete next.metadata!.resourceVersion;
      return next;
    });
    return { status: 200, object: r.object };
  },
};

/** the finalizer the namespace controller removes once the namespace is empty */
export const NAMESPACE_FINALIZER = 'kubernetes';

/** spec.finalizers of a namespace (what the `finalize` sub-resource replaces) */
export function finalizersOf(o: ApiObject): string[] {
  return (o.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [];
}
