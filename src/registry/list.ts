// list: the resourceVersion/resourceVersionMatch table of spec 000 §4.6 and
// paging with limit/continue (§4.5). Every chunk of a paged list is read at
// the revision of the first chunk, so the union of the chunks is a
// consistent snapshot.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type StatusError, badRequest, gone } from '../core/errors.js';
import { CompactedError } from '../store/types.js';
import { type Clock, systemClock } from '../core/clock.js';
import { type GenericStore, TOO_LARGE_RV_WAIT_MS, storeErrorToStatus } from './generic-store.js';
import { parseResourceVersion } from '../machinery/meta.js';
import { type FieldSelector, compileFieldSelector, exactName } from '../machinery/selectors/fields.js';
import { type LabelSelector, matchesLabels } from '../machinery/selectors/labels.js';
import { throwAsStatus } from './status-table.js';
import type { ApiObject } from './types.js';

export interface ListParams {
  namespace: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  limit?: number;
  continueToken?: string;
  /** raw `resourceVersion` query value; undefined when absent or empty */
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  items: ApiObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** a list result's ListMeta: resourceVersion, and continue and remainingItemCount when there are more */
export function listMetaOf(result: ListResult): Record<string, unknown> {
  const meta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) meta.continue = result.continue;
  if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
  return meta;
}

/** Read semantics a list resolves to (the cells of the §4.6 list table). */
export type ListSemantics =
  | { kind: 'mostRecent' }
  | { kind: 'any' }
  | { kind: 'notOlderThan'; rv: number }
  | { kind: 'exact'; rv: number }
  | { kind: 'continue'; rv: number; start: string };

/**
 * kube's 410 for a paged list whose consistent snapshot is gone (compacted, or
 * the token too old): Status.metadata.continue then holds a token that goes on
 * from the same key at the newest revision (etcd3 store's inconsistentContinue).
 */
const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** a token's `rv` meaning "the newest revision" (kube's continue token with resourceVersion -1) */
const LATEST = -1;

interface ContinueToken {
  v: 1;
  /** the revision of the first chunk; LATEST in the token of an expired list's 410 */
  rv: number;
  /** first key of the next chunk */
  start: string;
  /** issue time, ms */
  iat: number;
}

/** Continue tokens: opaque, HMAC-protected, expiring (spec 000 §4.5). */
export class ContinueTokens {
  constructor(
    private readonly secret: Buffer = randomBytes(32),
    readonly ttlMs = 5 * 60 * 1000,
    /** issue and expiry times (the composition root's clock, src/core/clock.ts) */
    private readonly clock: Clock = systemClock,
  ) {}

  encode(rv: number, start: string): string {
    const body = Buffer.from(JSON.stringify({ v: 1, rv, start, iat: this.clock.now() } satisfies ContinueToken)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode(token: string): ContinueToken {
    const dot = token.indexOf('.');
    const body = dot > 0 ? token.slice(0, dot) : '';
    const mac = dot > 0 ? token.slice(dot + 1) : '';
    const expected = this.sign(body);
    if (!body || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
      throw badRequest('continue key is not valid: the token is malformed or was not issued by this server');
    }
    let t: ContinueToken;
    try {
      t = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as ContinueToken;
    } catch {
      throw badRequest('continue key is not valid: the token is malformed');
    }
    if (t.v !== 1 || typeof t.rv !== 'number' || typeof t.start !== 'string' || typeof t.iat !== 'number') {
      throw badRequest('continue key is not valid: unknown token version');
    }
    if (this.clock.now() - t.iat > this.ttlMs) throw this.expired(t.start);
    return t;
  }

  /** the 410 of a list whose snapshot is gone, with the token that goes on from `start` at the newest revision */
  expired(start: string): StatusError {
    const e = gone(INCONSISTENT_CONTINUE);
    e.continueToken = this.encode(LATEST, start);
    return e;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}

/** Resolves the §4.6 list table; invalid combinations are 400. */
export function listSemantics(p: ListParams, tokens: ContinueTokens): ListSemantics {
  const rvRaw = p.resourceVersion;
  const match = p.resourceVersionMatch;
  if (match !== undefined && match !== '') {
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
    }
    if (rvRaw === undefined) {
      throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    if (p.continueToken) {
      throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided');
    }
    const rv = parseResourceVersion(rvRaw)!;
    if (match === 'Exact') {
      if (rv === 0) throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
      return { kind: 'exact', rv };
    }
    return rv === 0 ? { kind: 'any' } : { kind: 'notOlderThan', rv };
  }
  if (p.continueToken) {
    const rv = parseResourceVersion(rvRaw);
    if (rv !== undefined && rv !== 0) {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    const t = tokens.decode(p.continueToken);
    return { kind: 'continue', rv: t.rv === LATEST ? 0 : t.rv, start: t.start };
  }
  const rv = parseResourceVersion(rvRaw);
  if (rv === undefined) return { kind: 'mostRecent' };
  if (rv === 0) return { kind: 'any' };
  return p.limit !== undefined && p.limit > 0 ? { kind: 'exact', rv } : { kind: 'notOlderThan', rv };
}

/** Reads one chunk of a list. */
export async function listObjects(gs: GenericStore, p: ListParams, tokens: ContinueTokens): Promise<ListResult> {
  const sem = listSemantics(p, tokens);
  const store = gs.store;
  let atRevision = 0;
  switch (sem.kind) {
    case 'mostRecent': {
      const idx = await store.readIndex();
      await store.waitForRevision(idx, TOO_LARGE_RV_WAIT_MS);
      break;
    }
    case 'any':
      break;
    case 'notOlderThan':
      await gs.ensureRevision(sem.rv, p.resourceVersion!);
      break;
    case 'exact':
      await gs.ensureRevision(sem.rv, p.resourceVersion!);
      atRevision = sem.rv;
      break;
    case 'continue':
      // 0: the rest of an expired list, at the newest revision (as a list without resourceVersion)
      if (sem.rv === 0) await store.waitForRevision(await store.readIndex(), TOO_LARGE_RV_WAIT_MS);
      atRevision = sem.rv;
      break;
  }
  const readRev = atRevision || store.revision;
  const range = gs.rangeKeys(p.namespace);
  let start = sem.kind === 'continue' ? sem.start : range.key;
  const end = range.end;
  // a genuine token from another collection (another namespace, another
  // type) must not read outside this request's key range (spec 000 §4.5)
  if (sem.kind === 'continue' && (start < range.key || start >= end)) {
    throw badRequest('continue key is not valid: the token was issued for a different collection');
  }
  const filtered = p.labelSelector.length > 0 || p.fieldSelector.length > 0;
  const matchField = compileFields(gs, p.fieldSelector);
  const limit = p.limit !== undefined && p.limit > 0 ? p.limit : 0;

  // `metadata.name=x` inside one namespace (or cluster scope) is a single key
  const name = exactName(p.fieldSelector);
  if (name !== undefined && (p.namespace || gs.def.scope === 'Cluster') && sem.kind !== 'continue') {
    const key = gs.key(p.namespace, name);
    const single = read(store, { key, revision: readRev }, p.resourceVersion);
    const decoded = gs.convertsByWebhook ? await gs.decodeAll(single.kvs) : single.kvs.map((kv) => gs.decode(kv));
    const items = decoded.filter((o) => keep(o));
    return { items, resourceVersion: String(single.revision) };
  }

  const items: ApiObject[] = [];
  let lastKey: string | undefined;
  let more = false;
  let remaining: number | undefined;
  // unfiltered: one range of `limit` keys; filtered: keep reading batches until `limit` matches
  const batch = limit > 0 ? Math.max(limit, filtered ? 500 : limit) : 0;
  for (;;) {
    const r = read(store, { key: start, end, limit: batch || undefined, revision: readRev }, p.resourceVersion, sem.kind === 'continue' ? () => tokens.expired(start) : undefined);
    // a conversion webhook converts the batch in one review (kube sends a list's objects together)
    const converted = gs.convertsByWebhook ? await gs.decodeAll(r.kvs) : undefined;
    let i = 0;
    for (; i < r.kvs.length; i++) {
      const kv = r.kvs[i]!;
      const obj = converted ? converted[i]! : gs.decode(kv);
      if (!filtered || keep(obj)) {
        items.push(obj);
        lastKey = kv.key;
        if (limit > 0 && items.length === limit) {
          i++;
          break;
        }
      } else lastKey = kv.key;
    }
    const cutShort = i < r.kvs.length || r.more;
    if (limit > 0 && items.length === limit) {
      more = cutShort;
      if (more && !filtered) remaining = r.count - i;
      break;
    }
    if (!r.more) break;
    start = r.kvs[r.kvs.length - 1]!.key + '\u0000';
  }
  const result: ListResult = { items, resourceVersion: String(readRev) };
  if (more && lastKey !== undefined) {
    result.continue = tokens.encode(readRev, lastKey + '\u0000');
    if (remaining !== undefined) result.remainingItemCount = remaining;
  }
  return result;

  function keep(o: ApiObject): boolean {
    if (p.labelSelector.length > 0 && !matchesLabels(p.labelSelector, o.metadata?.labels)) return false;
    if (matchField && !matchField(o)) return false;
    return true;
  }
}

/** an unsupported field is the client's error (400), whichever verb lists (list, deletecollection) */
function compileFields(gs: GenericStore, sel: FieldSelector): ((o: ApiObject) => boolean) | undefined {
  if (sel.length === 0) return undefined;
  try {
    return compileFieldSelector(gs.def, sel);
  } catch (e) {
    throwAsStatus(e);
  }
}

/** `expired`: the error of a continued list whose revision was compacted away (kube's handleCompactedErrorForPaging) */
function read(store: GenericStore['store'], req: Parameters<GenericStore['store']['range']>[0], rvRaw?: string, expired?: () => StatusError) {
  try {
    return store.range(req);
  } catch (e) {
    if (expired && e instanceof CompactedError) throw expired();
    return storeErrorToStatus(e, rvRaw);
  }
}
