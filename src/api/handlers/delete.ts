import { badRequest } from '../errors.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { HandlerContext } from './context.js';
import { intParam, mediaType, parseDryRun } from './common.js';
import { parse as parseYaml } from 'yaml';

/** DeleteOptions from the query and the optional body (spec 000 §2.6) */
export interface DeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

export function parseDeleteOptions(req: ApiRequest): DeleteOptions {
  let body: Record<string, unknown> = {};
  if (req.body && req.body.length > 0) {
    const text = new TextDecoder().decode(req.body);
    try {
      const v = mediaType(req.contentType) === 'application/yaml' ? parseYaml(text) : JSON.parse(text);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) body = v as Record<string, unknown>;
      else if (v !== null) throw new Error('not an object');
    } catch (e) {
      throw badRequest(`the body of the request must be DeleteOptions: ${(e as Error).message}`);
    }
    if (body.kind !== undefined && body.kind !== 'DeleteOptions') {
      throw badRequest(`the kind in the body (${String(body.kind)}) must be DeleteOptions`);
    }
  }
  const q = req.query;
  const dryRun = parseDryRun(q, body.dryRun);
  const grace = intParam(q, 'gracePeriodSeconds') ?? (typeof body.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined);
  if (grace !== undefined && grace < 0) throw badRequest('gracePeriodSeconds: Invalid value: must be greater than or equal to 0');
  const policy = q.get('propagationPolicy') || (typeof body.propagationPolicy === 'string' ? body.propagationPolicy : undefined);
  if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
    throw badRequest(`propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  const orphanQ = q.get('orphanDependents');
  const orphanDependents = orphanQ !== null ? orphanQ === 'true' : typeof body.orphanDependents === 'boolean' ? body.orphanDependents : undefined;
  if (orphanDependents !== undefined && policy !== undefined) {
    throw badRequest('orphanDependents: Invalid value: orphanDependents and propagationPolicy cannot both be set');
  }
  const pre = body.preconditions as { uid?: unknown; resourceVersion?: unknown } | undefined;
  const preconditions =
    pre && typeof pre === 'object'
      ? {
          uid: typeof pre.uid === 'string' ? pre.uid : undefined,
          resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
        }
      : undefined;
  const unsafe =
    q.get('ignoreStoreReadErrorWithClusterBreakingPotential') === 'true' ||
    body.ignoreStoreReadErrorWithClusterBreakingPotential === true;
  return {
    dryRun,
    gracePeriodSeconds: grace,
    propagationPolicy: policy as DeleteOptions['propagationPolicy'],
    orphanDependents,
    preconditions,
    ignoreStoreReadErrorWithClusterBreakingPotential: unsafe || undefined,
  };
}

/** DELETE on an object path (spec 000 §3.1, §4.10) */
export async function handleDelete(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const opts = parseDeleteOptions(req);
  const gs = ctx.storeFor(req.def);
  const { object, deleted } = await gs.delete(req.info.namespace, req.info.name, opts);
  // 200 with the object: immediately removed or (with finalizers) marked for deletion
  return { status: deleted || !opts.dryRun ? 200 : 200, body: object };
}
