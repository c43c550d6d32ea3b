// The generic `scale` sub-resource (spec 000 §4.1 sub-resources; Kubernetes'
// ScaleREST): GET returns an `autoscaling/v1 Scale` built from the paths the
// kind declares (`ResourceDefinition.scale`, the same three paths a CRD's
// `subresources.scale` names); PUT and PATCH change only the replicas field of
// the object, under the object's own resourceVersion. Deployments, ReplicaSets,
// StatefulSets and ReplicationControllers use it; custom resources can too.

import { parse as parseYaml } from 'yaml';
import { badRequest, conflict, invalid, unsupportedMediaType } from '../../core/errors.js';
import { applyJsonPatch } from '../../machinery/patch/json-patch.js';
import { applyMergePatch } from '../../machinery/patch/merge-patch.js';
import { patchMediaTypes } from '../../machinery/patch/media-types.js';
import type { ApiObject, JSONValue, ResourceDefinition, ScaleSubresource, VerbHandler } from '../../registry/types.js';
import { bodyText, parseBody, parseDryRun, parseFieldValidation } from './common.js';
import { fieldManagerOf } from './create.js';
import type { HandlerContext } from './context.js';
import type { ApiRequest, ApiResponse } from '../request.js';

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

const mainRequest = (req: ApiRequest): ApiRequest => ({ ...req, info: { ...req.info, subresource: '' } });

async function getScale(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const o = await ctx.storeFor(req.def).get(req.info.namespace, req.info.name);
  return { status: 200, body: scaleOf(req.def, req.def.scale!, o) };
}

/** writes replicas (and checks a resourceVersion precondition) inside one guaranteed update */
async function writeScale(ctx: HandlerContext, req: ApiRequest, next: (current: ApiObject) => ApiObject): Promise<ApiResponse> {
  const scale = req.def.scale!;
  const warnings: string[] = [];
  const r = await ctx.storeFor(req.def).guaranteedUpdate(
    req.info.namespace,
    req.info.name,
    {
      dryRun: parseDryRun(req.query),
      fieldValidation: parseFieldValidation(req.query),
      manager: fieldManagerOf(ctx, mainRequest(req), 'UpdateOptions'),
      subresource: 'scale',
      // admitted as an UPDATE of the parent object with subResource scale (docs/admission.md)
      user: req.user,
      requester: req.user,
      warnings,
    },
    (current) => {
      const cur = current!;
      const want = next(cur);
      const rv = (want.metadata as Record<string, JSONValue> | undefined)?.resourceVersion;
      if (typeof rv === 'string' && rv !== '' && rv !== cur.metadata?.resourceVersion) {
        throw conflict(req.def.resource, req.def.group, req.info.name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      const replicas = at(want, ['spec', 'replicas']);
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw invalid('Scale', 'autoscaling', req.info.name, [{
          field: 'spec.replicas', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
        }]);
      }
      setAt(cur, pathOf(scale.specReplicasPath), replicas);
      return cur;
    },
  );
  return { status: 200, body: scaleOf(req.def, scale, r.object), warnings };
}

function asObject(v: unknown, what: string): ApiObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badRequest(`the body of the request must be a ${what}`);
  return v as ApiObject;
}

async function updateScale(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const body = asObject(parseBody(req).value, 'Scale object');
  if (body.kind !== undefined && body.kind !== 'Scale') throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (Scale)`);
  return writeScale(ctx, req, () => body);
}

async function patchScale(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const type = (req.contentType || '').split(';')[0]!.trim().toLowerCase(); // split returns at least one part
  let patch: JSONValue;
  try {
    // apply configurations are YAML (JSON is YAML too)
    patch = (type === 'application/apply-patch+yaml' ? parseYaml(bodyText(req)) : JSON.parse(bodyText(req))) as JSONValue;
  } catch (e) {
    throw badRequest(`the request body could not be decoded: ${(e as Error).message.split('\n')[0]}`);
  }
  return writeScale(ctx, req, (current) => {
    const scale = scaleOf(req.def, req.def.scale!, current) as unknown as JSONValue;
    switch (type) {
      case 'application/json-patch+json': return asObject(applyJsonPatch(scale, patch), 'Scale object');
      // a Scale has no lists: strategic merge and apply are a merge patch on it
      case 'application/merge-patch+json':
      case 'application/strategic-merge-patch+json':
      case 'application/apply-patch+yaml':
        return asObject(applyMergePatch(scale, patch), 'Scale object');
      default:
        throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${patchMediaTypes(true).join(', ')}`);
    }
  });
}

/** handlers for `<resource>/scale`, keyed like ResourceDefinition.handlers */
export const SCALE_HANDLERS: Record<string, VerbHandler> = { get: getScale, update: updateScale, patch: patchScale };
