// The query of a watch request (spec 000 §4.2) and the §4.6 watch table,
// validated the way Kubernetes validates watch ListOptions: invalid
// combinations are 400 (spec 000 §7).

import { badRequest } from '../core/errors.js';
import { parseResourceVersion } from '../machinery/meta.js';
import { type FieldSelector, parseFieldSelector } from '../machinery/selectors/fields.js';
import { type LabelSelector, SelectorParseError, parseLabelSelector } from '../machinery/selectors/labels.js';

export interface WatchParams {
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  /** undefined = unset or empty */
  resourceVersion?: number;
  rawResourceVersion?: string;
  /** undefined when the parameter is absent (Kubernetes treats absent and false differently) */
  sendInitialEvents?: boolean;
  allowWatchBookmarks: boolean;
  /** undefined or 0 = the server default */
  timeoutSeconds?: number;
}

/** Where a watch starts (the cells of the §4.6 watch table plus §4.5 streaming lists). */
export interface StartPlan {
  /** wait for a consistent read (ReadIndex) before starting: resourceVersion unset */
  consistent: boolean;
  /** wait until the cache has reached this revision before starting */
  notOlderThan?: number;
  /** send synthetic ADDED events for the current state first */
  initialEvents: boolean;
  /** after the initial events, a BOOKMARK with the initial-events-end annotation (sendInitialEvents + bookmarks) */
  initialEventsEndBookmark: boolean;
  /** replay the history after this revision (no initial events) */
  after?: number;
}

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === 'true' || v === '1' || (v === '' && q.has(name));
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`${name}: Invalid value: "${v}": must be an integer`);
  return Number(v);
}

export function parseWatchParams(q: URLSearchParams): WatchParams {
  let labelSelector: LabelSelector;
  let fieldSelector: FieldSelector;
  try {
    labelSelector = parseLabelSelector(q.get('labelSelector') ?? '');
    fieldSelector = parseFieldSelector(q.get('fieldSelector') ?? '');
  } catch (e) {
    if (e instanceof SelectorParseError) throw badRequest(e.message);
    throw e;
  }
  const raw = q.get('resourceVersion') ?? undefined;
  const resourceVersion = parseResourceVersion(raw);
  const match = q.get('resourceVersionMatch') ?? '';
  const sendInitialEvents = q.has('sendInitialEvents') ? boolParam(q, 'sendInitialEvents') : undefined;
  const timeoutSeconds = intParam(q, 'timeoutSeconds');
  if (timeoutSeconds !== undefined && timeoutSeconds < 0) {
    throw badRequest(`timeoutSeconds: Invalid value: ${timeoutSeconds}: must be greater than or equal to 0`);
  }
  if (q.get('continue')) {
    throw badRequest('continue: Forbidden: continue is forbidden for watch');
  }
  // spec 000 §4.2/§4.5: resourceVersionMatch on a watch only with sendInitialEvents, and then only NotOlderThan
  if (sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    throw badRequest('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  }
  if (match !== '') {
    if (sendInitialEvents === undefined) {
      throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    }
    if (match !== 'NotOlderThan') {
      throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "NotOlderThan"`);
    }
  }
  return {
    labelSelector,
    fieldSelector,
    resourceVersion,
    rawResourceVersion: raw === '' ? undefined : raw,
    sendInitialEvents,
    allowWatchBookmarks: boolParam(q, 'allowWatchBookmarks'),
    timeoutSeconds: timeoutSeconds === 0 ? undefined : timeoutSeconds,
  };
}

/**
 * spec 000 §4.6 watch table and §4.5 streaming lists:
 * - unset: consistent state as synthetic ADDED events, then changes
 * - `0`: state at any version as synthetic ADDED events, then changes
 * - `N`: the changes after N, no synthetic events
 * - `sendInitialEvents=true` + `NotOlderThan`: synthetic ADDED events for a
 *   state not older than N (consistent when unset), then a bookmark, then changes
 * - `sendInitialEvents=false` + `NotOlderThan`: like the legacy cell for N; for unset/0, start at the current state without synthetic events
 */
export function startPlan(p: WatchParams): StartPlan {
  const rv = p.resourceVersion;
  if (p.sendInitialEvents === true) {
    return {
      consistent: rv === undefined,
      notOlderThan: rv !== undefined && rv > 0 ? rv : undefined,
      initialEvents: true,
      initialEventsEndBookmark: p.allowWatchBookmarks,
    };
  }
  if (p.sendInitialEvents === false) {
    if (rv !== undefined && rv > 0) return { consistent: false, notOlderThan: rv, initialEvents: false, initialEventsEndBookmark: false, after: rv };
    return { consistent: rv === undefined, initialEvents: false, initialEventsEndBookmark: false };
  }
  if (rv === undefined) return { consistent: true, initialEvents: true, initialEventsEndBookmark: false };
  if (rv === 0) return { consistent: false, initialEvents: true, initialEventsEndBookmark: false };
  return { consistent: false, notOlderThan: rv, initialEvents: false, initialEventsEndBookmark: false, after: rv };
}
