// kube 1.32's ValidateEventUpdate for writes through events.k8s.io/v1 (core v1
// updates keep the legacy checks only): everything but the series and the
// metadata is fixed. kube checks the internal core Event, so its paths are
// the core names (`involvedObject`, `message`, `source`, …, not `regarding`,
// `note`, `deprecatedSource`) and its values Go's %#v of the internal types.

import { deepEqual } from '../../machinery/meta.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { goStruct, invalidShown, required } from './field-errors.js';

type Obj = Record<string, JSONValue>;

const obj = (v: JSONValue | undefined): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});
const str = (v: JSONValue | undefined): string => (typeof v === 'string' ? v : '');
const quoted = (v: JSONValue | undefined): string => JSON.stringify(str(v));

const REFERENCE: [string, string][] = [
  ['Kind', 'kind'], ['Namespace', 'namespace'], ['Name', 'name'], ['UID', 'uid'], ['APIVersion', 'apiVersion'], ['ResourceVersion', 'resourceVersion'], ['FieldPath', 'fieldPath'],
];
const reference = (v: JSONValue | undefined): string => goStruct('core.ObjectReference', REFERENCE, v);

/** Go's time.Time String() of an RFC 3339 value (metav1.Time and MicroTime print so): `2024-05-01 10:00:00.5 +0000 UTC` */
export function goTime(v: JSONValue | undefined): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.exec(str(v));
  if (!m) return '0001-01-01 00:00:00 +0000 UTC';
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  const zone = m[4]!.toUpperCase() === 'Z' ? '+0000 UTC' : `${m[4]!.replace(':', '')} ${m[4]!.replace(':', '')}`;
  return `${m[1]!} ${m[2]!}${fraction === '.' ? '' : fraction} ${zone}`;
}

/** the internal field kube names, how it prints the new value, and the events.k8s.io/v1 field it comes from */
const FIXED: [string, (v: JSONValue | undefined) => string, string][] = [
  ['involvedObject', reference, 'regarding'],
  ['reason', quoted, 'reason'],
  ['message', quoted, 'note'],
  ['source', (v) => goStruct('core.EventSource', [['Component', 'component'], ['Host', 'host']], v), 'deprecatedSource'],
  ['firstTimestamp', goTime, 'deprecatedFirstTimestamp'],
  ['lastTimestamp', goTime, 'deprecatedLastTimestamp'],
  ['count', (v) => String(typeof v === 'number' ? v : 0), 'deprecatedCount'],
  // kube checks the reason twice: the message names it once, the causes twice
  ['reason', quoted, 'reason'],
  ['type', quoted, 'type'],
  ['eventTime', goTime, 'eventTime'],
  ['action', quoted, 'action'],
  ['related', (v) => (v === undefined || v === null ? '"null"' : reference(v)), 'related'],
  ['reportingController', quoted, 'reportingController'],
  ['reportingInstance', quoted, 'reportingInstance'],
];

/** kube's ValidateEventUpdate past the legacy checks, for an events.k8s.io/v1 Event */
export function eventV1UpdateErrors(o: ApiObject, old: ApiObject): FieldError[] {
  const next = o as Obj;
  const prev = old as Obj;
  const errs: FieldError[] = [];
  if (!deepEqual(next.series ?? null, prev.series ?? null) && next.series) {
    // count is checked with the other rules (validateEventV1Common)
    if (!str(obj(next.series).lastObservedTime)) errs.push(required('series.lastObservedTime'));
  }
  for (const [field, show, from] of FIXED) {
    const now = show(next[from]);
    if (now !== show(prev[from])) errs.push(invalidShown(field, now, 'field is immutable'));
  }
  return errs;
}
