// The generic `scale` sub-resource (spec 000 §4.1 sub-resources; Kubernetes'
// ScaleREST) as capabilities (src/registry/capabilities.ts): GET returns an
// `autoscaling/v1 Scale` built from the paths the kind declares
// (`ResourceDefinition.scale`, the same three paths a CRD's
// `subresources.scale` names); PUT and PATCH change only the replicas field of
// the object, under the object's own resourceVersion. Deployments,
// ReplicaSets, StatefulSets and ReplicationControllers use it; custom resources
// can too. The endpoint layer decodes the Scale body or the patch
// (src/endpoints/handlers/capability.ts).

import { conflict, invalid } from '../core/errors.js';
import type { Capabilities, CapabilityContext, CapabilityResult } from './capabilities.js';
import type { ApiObject, JSONValue, ResourceDefinition, ScaleSubresource } from './types.js';

/** `.spec.replicas` → ['spec', 'replicas'] (CRD scale paths are JSON paths without array indexes) */
function pathOf(p: string): string[] {
  return p.replace(/^\./, '').split('.').filter((s) => s !== '');
}

function at(o: unknown, path: string[]): JSONValue | undefined {
  let cur: unknown = o;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur as JSONValue | undefined;
}

function setAt(o: ApiObject, path: string[], v: JSONValue): void {
  const last = path[path.length - 1];
  if (last === undefined) throw new Error('scale: empty field path');
  let cur = o as Record<string, JSONValue>;
  for (const k of path.slice(0, -1)) {
    const next = cur[k];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as Record<string, JSONValue>;
  }
  cur[last] = v;
}

/** a metav1.LabelSelector or a plain map (ReplicationController) as selector text */
function selectorString(sel: JSONValue | undefined): string {
  if (typeof sel === 'string') return sel;
  if (sel === null || typeof sel !== 'object' || Array.isArray(sel)) return '';
  const isLabelSelector = 'matchLabels' in sel || 'matchExpressions' in sel;
  const labels = (isLabelSelector ? sel.matchLabels : sel) as Record<string, JSONValue> | undefined;
  const parts = Object.entries(labels ?? {}).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of (isLabelSelector && Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [])) {
    const r = e as Record<string, JSONValue>;
    const values = Array.isArray(r.values) ? r.values.map(String).join(',') : '';
    const op = String(r.operator ?? '');
    parts.push(op === 'Exists' ? String(r.key) : op === 'DoesNotExist' ? `!${String(r.key)}` : `${String(r.key)} ${op.toLowerCase()} (${values})`);
  }
  return parts.join(',');
}

export function scaleOf(def: ResourceDefinition, scale: ScaleSubresource, o: ApiObject): ApiObject {
  const m = o.metadata ?? {};
  const metadata: Record<string, JSONValue> = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp'] as const) if (m[k] !== undefined) metadata[k] = m[k] as JSONValue;
  const specReplicas = at(o, pathOf(scale.specReplicasPath));
  const status: Record<string, JSONValue> = { replicas: (at(o, pathOf(scale.statusReplicasPath)) as number | undefined) ?? 0 };
  if (scale.labelSelectorPath) {
    const sel = selectorString(at(o, pathOf(scale.labelSelectorPath)));
    if (sel) status.selector = sel;
  }
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: (specReplicas as number | undefined) ?? 0 }, status };
}

/** sets the replicas a Scale writes (the HorizontalPodAutoscaler controller's rescale) */
export function setScaleReplicas(scale: ScaleSubresource, o: ApiObject, replicas: number): void {
  setAt(o, pathOf(scale.specReplicasPath), replicas);
}

/** the `scale` capabilities of a definition that declares `scale` */
export function scaleCapabilities(def: ResourceDefinition, scale: ScaleSubresource): Capabilities {
  return {
    // the body is a Scale, whatever its group (autoscaling/v1 from kubectl, or another served version)
    body: { kind: { kind: 'Scale' } },
    async get(ctx) {
      const o = await ctx.store().get(ctx.namespace, ctx.name);
      return { status: 200, object: scaleOf(def, scale, o) };
    },
    update: (ctx, body) => writeScale(def, scale, ctx, () => body),
    // a patch applies to the Scale view of the current object
    patch: (ctx, apply) => writeScale(def, scale, ctx, (current) => apply(scaleOf(def, scale, current))),
  };
}

const INT32_MAX = 2 ** 31 - 1;

/** writes replicas (and checks a resourceVersion precondition) inside one guaranteed update */
async function writeScale(
  def: ResourceDefinition,
  scale: ScaleSubresource,
  ctx: CapabilityContext,
  next: (current: ApiObject) => ApiObject,
): Promise<CapabilityResult> {
  const warnings: string[] = [];
  const r = await ctx.store().guaranteedUpdate(
    ctx.namespace,
    ctx.name,
    {
      dryRun: ctx.dryRun,
      fieldValidation: ctx.fieldValidation(),
      manager: ctx.fieldManager('UpdateOptions'),
      subresource: 'scale',
      // admitted as an UPDATE of the parent object with subResource scale (docs/admission.md)
      user: ctx.user,
      requester: ctx.user,
      warnings,
    },
    (current) => {
      const cur = current!;
      const want = next(cur);
      const rv = (want.metadata as Record<string, JSONValue> | undefined)?.resourceVersion;
      if (typeof rv === 'string' && rv !== '' && rv !== cur.metadata?.resourceVersion) {
        throw conflict(def.resource, def.group, ctx.name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      const replicas = at(want, ['spec', 'replicas']);
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw invalid('Scale', 'autoscaling', ctx.name, [{
          field: 'spec.replicas', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
        }]);
      }
      // ScaleSpec.replicas is a Go int32: kube's decoder refuses a larger number, so nothing stores it
      if (replicas > INT32_MAX) {
        throw invalid('Scale', 'autoscaling', ctx.name, [{
          field: 'spec.replicas', type: 'FieldValueTypeInvalid', message: `Invalid value: ${String(replicas)}: spec.replicas in body must be of type int32: "${String(replicas)}"`,
        }]);
      }
      setAt(cur, pathOf(scale.specReplicasPath), replicas);
      // returned without its resourceVersion, which would be a precondition: a write racing this one
      // re-runs the transform on the newer object, as kube's unconditional scale update retries; a
      // version the Scale names was checked above, and is checked again on the newer object
      if (cur.metadata) delete cur.metadata.resourceVersion;
      return cur;
    },
  );
  return { status: 200, object: scaleOf(def, scale, r.object), warnings };
}
