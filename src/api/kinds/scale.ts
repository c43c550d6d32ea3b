// The `scale` sub-resource as a capability a kind declares (spec 000 §4.1
// sub-resources; kube's autoscaling/v1 Scale): GET answers a Scale built from
// the object, PUT and PATCH set the desired replicas and nothing else.
// Deployments, ReplicaSets, StatefulSets and ReplicationControllers use it;
// custom resources will declare their paths the same way.

import { STALE_OBJECT, badRequest, conflict, invalid, notFound, unsupportedMediaType } from '../errors.js';
import { bodyText, decodeObjectBody, parseDryRun } from '../handlers/common.js';
import { applyPatch, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH } from '../patch/index.js';
import type { ApiObject, JSONValue, ResourceDefinition, VerbHandler } from '../types.js';
import { decodeObject } from '../generic-store.js';
import type { ApiRequest } from '../request.js';

export interface ScalePaths {
  /** e.g. ['spec', 'replicas'] */
  specReplicas: string[];
  /** e.g. ['status', 'replicas'] */
  statusReplicas: string[];
  /** a LabelSelector object (['spec', 'selector']) whose text becomes `status.selector` */
  labelSelector?: string[];
  /** a map of labels (ReplicationController's ['spec', 'selector']) */
  labelMap?: string[];
}

function at(o: unknown, path: string[]): unknown {
  let cur = o;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function setAt(o: ApiObject, path: string[], value: JSONValue): void {
  let cur = o as Record<string, JSONValue>;
  for (const p of path.slice(0, -1)) {
    const next = cur[p];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[p] = {};
    cur = cur[p] as Record<string, JSONValue>;
  }
  cur[path[path.length - 1]!] = value;
}

/** `a=b,c in (d,e)` from a LabelSelector, as kube prints `status.selector` */
export function selectorText(sel: unknown): string {
  if (sel === null || typeof sel !== 'object') return '';
  const s = sel as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    const vals = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.sort().join(',');
}

export function scaleOf(obj: ApiObject, paths: ScalePaths): ApiObject {
  const m = obj.metadata ?? {};
  const selector = paths.labelSelector
    ? selectorText(at(obj, paths.labelSelector))
    : paths.labelMap
      ? Object.entries((at(obj, paths.labelMap) as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).sort().join(',')
      : '';
  const specReplicas = at(obj, paths.specReplicas);
  const statusReplicas = at(obj, paths.statusReplicas);
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
    status: { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0, ...(selector ? { selector } : {}) },
  };
}

function replicasOf(scale: unknown, name: string): number {
  const r = at(scale, ['spec', 'replicas']);
  if (r === undefined) return 0;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 0) {
    throw invalid('Scale', 'autoscaling', name, [{ field: 'spec.replicas', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(r)}: must be greater than or equal to 0` }]);
  }
  return r;
}

async function writeReplicas(ctx: Parameters<VerbHandler>[0], req: ApiRequest, paths: ScalePaths, replicas: number, resourceVersion: string | undefined) {
  const r = await ctx.storeFor(req.def).guaranteedUpdate(req.info.namespace, req.info.name, { dryRun: parseDryRun(req.query), user: req.user, subresource: 'scale' }, (cur) => {
    if (!cur) throw notFound(req.def.resource, req.def.group, req.info.name);
    if (resourceVersion && resourceVersion !== cur.metadata?.resourceVersion) throw conflict(req.def.resource, req.def.group, req.info.name, STALE_OBJECT);
    setAt(cur, paths.specReplicas, replicas);
    return cur;
  });
  return { status: 200, body: scaleOf(r.object, paths) };
}

/** the `scale/get`, `scale/update` and `scale/patch` handlers of a kind */
export function scaleHandlers(paths: ScalePaths): Record<string, VerbHandler> {
  const current = (ctx: Parameters<VerbHandler>[0], req: ApiRequest): ApiObject => {
    const kv = ctx.storeFor(req.def).readRaw(req.info.namespace, req.info.name);
    if (!kv) throw notFound(req.def.resource, req.def.group, req.info.name);
    return decodeObject(kv);
  };
  return {
    'scale/get': async (ctx, req) => ({ status: 200, body: scaleOf(current(ctx, req), paths) }),
    'scale/update': async (ctx, req) => {
      const { obj } = decodeObjectBody(req);
      if (obj.metadata?.name !== undefined && obj.metadata.name !== req.info.name) {
        throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${req.info.name})`);
      }
      return writeReplicas(ctx, req, paths, replicasOf(obj, req.info.name), obj.metadata?.resourceVersion);
    },
    'scale/patch': async (ctx, req) => {
      const type = req.contentType.split(';')[0]!.trim().toLowerCase();
      if (![JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH].includes(type)) {
        throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${[JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH].join(', ')}`);
      }
      const scale = scaleOf(current(ctx, req), paths);
      let patched: JSONValue;
      try {
        patched = applyPatch(type, scale, bodyText(req));
      } catch (e) {
        throw badRequest(`the patch could not be applied to the Scale: ${(e as Error).message}`);
      }
      const rv = at(patched, ['metadata', 'resourceVersion']);
      return writeReplicas(ctx, req, paths, replicasOf(patched, req.info.name), typeof rv === 'string' && rv !== scale.metadata?.resourceVersion ? rv : undefined);
    },
  };
}

/** the definition with a `scale` sub-resource */
export function withScale(def: ResourceDefinition, paths: ScalePaths): ResourceDefinition {
  return { ...def, subresources: [...(def.subresources ?? []), 'scale'], handlers: { ...(def.handlers ?? {}), ...scaleHandlers(paths) } };
}
