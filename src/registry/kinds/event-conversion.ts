// Core v1 Events and events.<domain>/v1 Events are one store (as in
// Kubernetes, whose storage version is core v1): an Event written through one
// version is read, listed and watched through the other with its fields
// renamed (Kubernetes' pkg/apis/events/v1 conversion):
//
//   events/v1                  core/v1
//   regarding                  involvedObject
//   note                       message
//   reportingController        reportingComponent
//   deprecatedSource           source
//   deprecatedFirstTimestamp   firstTimestamp
//   deprecatedLastTimestamp    lastTimestamp
//   deprecatedCount            count
//   eventTime, series, action, reason, related, reportingInstance, type: unchanged

import { type StorageBinding, type VersionConverter, rename } from '../conversion.js';
import { clone } from '../../machinery/meta.js';
import type { ApiObject } from '../types.js';

const SAME = ['eventTime', 'series', 'action', 'reason', 'related', 'type'] as const;

/**
 * Kube's Go structs always print a struct field (`source`, `deprecatedSource`, `regarding`), empty
 * as `{}`, omitempty or not; clients read them without a check (client-node's
 * `event.source.component`), so an Event of either version carries them (core/v1 Events through
 * `defaultCoreEvent`). Its `metav1.Time`/`MicroTime` values are structs too, written `null` when
 * zero: a core/v1 Event from client-go's recorder has `"eventTime":null`, one written through
 * events/v1 `"firstTimestamp":null,"lastTimestamp":null`, and an events/v1 read of either has all
 * three (`eventTime`, `deprecatedFirstTimestamp`, `deprecatedLastTimestamp`), null when unset. The
 * core fields keep their nulls in storage (`x-orch-zero-null` in event.ts); events/v1 adds them on read.
 */
function withEmptyStructs(o: Record<string, unknown>, structs: readonly string[]): void {
  for (const f of structs) if (o[f] === undefined || o[f] === null) o[f] = {};
}

function withZeroTimes(o: Record<string, unknown>, times: readonly string[]): void {
  for (const f of times) o[f] ??= null;
}

const CORE_STRUCTS = ['involvedObject', 'source'] as const;
const CORE_TIMES = ['firstTimestamp', 'lastTimestamp', 'eventTime'] as const;

/** the empty structs and zero times of a core/v1 Event (its strategy's defaulting) */
export function defaultCoreEvent(o: ApiObject): void {
  withEmptyStructs(o as Record<string, unknown>, CORE_STRUCTS);
  withZeroTimes(o as Record<string, unknown>, CORE_TIMES);
}

/** [events/v1 field, core/v1 field] */
const RENAMED: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
];

const eventsV1: VersionConverter = {
  toHub(o) {
    const src = clone(o) as Record<string, unknown>;
    const out: Record<string, unknown> = { apiVersion: 'v1', kind: 'Event', metadata: src.metadata };
    for (const f of SAME) if (src[f] !== undefined && src[f] !== null) out[f] = src[f];
    rename(src, out, RENAMED);
    if (typeof src.deprecatedCount === 'number' && src.deprecatedCount !== 0) out.count = src.deprecatedCount;
    if (src.reportingController) out.reportingComponent = src.reportingController;
    if (src.reportingInstance) out.reportingInstance = src.reportingInstance;
    withEmptyStructs(out, CORE_STRUCTS);
    withZeroTimes(out, CORE_TIMES);
    return out as ApiObject;
  },
  fromHub(o) {
    const src = clone(o) as Record<string, unknown>;
    const out: Record<string, unknown> = { apiVersion: '', kind: 'Event', metadata: src.metadata };
    for (const f of SAME) if (src[f] !== undefined && src[f] !== null) out[f] = src[f];
    rename(src, out, RENAMED.map(([a, b]) => [b, a]));
    if (typeof src.count === 'number' && src.count !== 0) out.deprecatedCount = src.count;
    // empty strings are what a core Event without them defaults to; events/v1 omits them
    if (src.reportingComponent) out.reportingController = src.reportingComponent;
    if (src.reportingInstance) out.reportingInstance = src.reportingInstance;
    withEmptyStructs(out, ['regarding', 'deprecatedSource']);
    withZeroTimes(out, ['eventTime', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp']);
    return out as ApiObject;
  },
};

/** the binding both Event definitions carry: stored as core v1 under `/registry/core/events/` */
export function eventStorage(eventsGroup: string): StorageBinding {
  return { group: '', resource: 'events', storageVersion: 'v1', versions: { [`${eventsGroup}/v1`]: eventsV1 } };
}
