// What a watch asks for (spec 000 §4.2) and where it starts (the §4.6 watch
// table). The query is parsed and validated by the endpoint layer
// (src/endpoints/list-params.ts, one parser for list, watch and deletecollection).

import type { FieldSelector } from '../machinery/selectors/fields.js';
import type { LabelSelector } from '../machinery/selectors/labels.js';

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
