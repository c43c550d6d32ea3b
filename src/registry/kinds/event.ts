// core/v1 Event (the legacy shape, `involvedObject`) and events.<domain>/v1
// Event (spec 000 §6: `regarding`, required reporting fields on creation,
// deprecated* fields not allowed on new objects, type Normal|Warning).

import { isQualifiedName } from '../../machinery/schema/object-meta.js';
import { eventV1UpdateErrors } from './event-update.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, fieldOf, get, getObject, getString, since } from './columns.js';
import { int32, obj, proto, ref, str, time } from '../../machinery/schema/dsl.js';
import { defaultCoreEvent, eventStorage } from './event-conversion.js';
import { kindSchema } from './meta.js';

const microTime = (d: string) => ({ ...time(d), description: `${d} Microsecond precision.`, 'x-orch-proto-type': 'MicroTime' as const });

export function coreEventDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'Event',
    resource: 'events',
    singular: 'event',
    scope: 'Namespaced',
    shortNames: ['ev'],
    // one store with events.<domain>/v1 (event-conversion.ts)
    storage: eventStorage(n.group('events')),
    schema: kindSchema(
      n,
      'Event is a report of an event somewhere in the cluster (legacy core shape; see events.' + n.apiDomain + '/v1).',
      proto({
        involvedObject: 2, reason: 3, message: 4, source: 5, firstTimestamp: 6, lastTimestamp: 7, count: 8, type: 9, eventTime: 10,
        series: 11, action: 12, related: 13, reportingComponent: 14, reportingInstance: 15,
      }, {
        involvedObject: ref(n.core('ObjectReference'), 'The object this event is about.'),
        reason: str('Short machine-understandable reason for the transition into the object\'s current status.'),
        message: str('Human-readable description of the status of this operation.'),
        source: obj('Component reporting this event.', proto({ component: 1, host: 2 }, { component: str('Component the event comes from.'), host: str('Node name the event comes from.') })),
        firstTimestamp: { ...time('Time at which the event was first recorded.'), 'x-orch-zero-null': true },
        lastTimestamp: { ...time('Time of the most recent occurrence.'), 'x-orch-zero-null': true },
        count: int32('Number of times this event has occurred.', { 'x-orch-proto-omit-zero': true }),
        type: str('Type of the event (Normal, Warning).'),
        eventTime: { ...microTime('Time when this event was first observed.'), 'x-orch-zero-null': true },
        series: obj('Data about the event series this event represents.', proto({ count: 1, lastObservedTime: 2 }, { count: int32('Occurrences so far.', { 'x-orch-proto-omit-zero': true }), lastObservedTime: microTime('Last occurrence.') })),
        action: str('What action was taken or failed regarding the object.'),
        related: ref(n.core('ObjectReference'), 'Optional secondary object for more complex actions.'),
        reportingComponent: str('Name of the controller that emitted the event.', { default: '' }),
        reportingInstance: str('ID of the controller instance.', { default: '' }),
      }),
      ['metadata', 'involvedObject'],
    ),
    strategy: {
      default: defaultCoreEvent,
      validate: (o) => {
        const errs: FieldError[] = [];
        const ns = getString(o, 'involvedObject', 'namespace');
        if (ns && o.metadata?.namespace && ns !== o.metadata.namespace) {
          errs.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(ns)}: does not match event.namespace` });
        }
        const t = getString(o, 'type');
        if (t && t !== 'Normal' && t !== 'Warning') {
          errs.push({ field: 'type', type: 'FieldValueInvalid', message: `Invalid value: "": has invalid value: ${t}` });
        }
        return errs;
      },
      columns: [
        column('Last Seen', 'string', (o, now) => since(getString(o, 'series', 'lastObservedTime') ?? getString(o, 'lastTimestamp') ?? getString(o, 'firstTimestamp') ?? getString(o, 'eventTime'), now)),
        column('Type', 'string', (o) => getString(o, 'type') ?? ''),
        column('Reason', 'string', (o) => getString(o, 'reason') ?? ''),
        column('Object', 'string', (o) => `${(getString(o, 'involvedObject', 'kind') ?? '').toLowerCase()}/${getString(o, 'involvedObject', 'name') ?? ''}`),
        column('Subobject', 'string', (o) => getString(o, 'involvedObject', 'fieldPath') ?? '', { priority: 1 }),
        column('Source', 'string', (o) => eventSource(o), { priority: 1 }),
        column('Message', 'string', (o) => getString(o, 'message') ?? ''),
        column('First Seen', 'string', (o, now) => since(getString(o, 'firstTimestamp') ?? getString(o, 'eventTime'), now), { priority: 1 }),
        column('Count', 'integer', (o) => Number(get(o, 'series', 'count') ?? get(o, 'count') ?? 1) || 1, { priority: 1 }),
      ],
      // kube's Event table: no Age, and Name only with -o wide, last
      exactColumns: true,
      nameColumnLast: true,
      selectableFields: {
        'involvedObject.kind': fieldOf('involvedObject', 'kind'),
        'involvedObject.namespace': fieldOf('involvedObject', 'namespace'),
        'involvedObject.name': fieldOf('involvedObject', 'name'),
        'involvedObject.uid': fieldOf('involvedObject', 'uid'),
        'involvedObject.apiVersion': fieldOf('involvedObject', 'apiVersion'),
        'involvedObject.resourceVersion': fieldOf('involvedObject', 'resourceVersion'),
        'involvedObject.fieldPath': fieldOf('involvedObject', 'fieldPath'),
        reason: fieldOf('reason'),
        reportingComponent: fieldOf('reportingComponent'),
        // kube's ToSelectableFields: source.component, or the reporting controller when it is empty
        // (an event written through events.k8s.io has no source)
        source: (o) => getString(o, 'source', 'component') || getString(o, 'reportingComponent') || '',
        type: fieldOf('type'),
      },
    },
  };
}

/** kube's formatEventSource: `component, host`, each falling back to reportingComponent/reportingInstance */
function eventSource(o: ApiObject): string {
  const component = getString(o, 'source', 'component') || getString(o, 'reportingComponent') || '';
  const host = getString(o, 'source', 'host') || getString(o, 'reportingInstance') || '';
  return host ? `${component}, ${host}` : component;
}

const LIMIT_128 = 128;

export function eventsV1Definition(n: SchemaNames): ResourceDefinition {
  const group = n.group('events');
  return {
    group,
    version: 'v1',
    kind: 'Event',
    resource: 'events',
    singular: 'event',
    scope: 'Namespaced',
    shortNames: ['ev'],
    // stored as core v1 Events (event-conversion.ts)
    storage: eventStorage(group),
    schema: kindSchema(
      n,
      'Event is a report of an event somewhere in the cluster. It generally denotes a state change in the system.',
      proto({
        eventTime: 2, series: 3, reportingController: 4, reportingInstance: 5, action: 6, reason: 7, regarding: 8, related: 9, note: 10,
        type: 11, deprecatedSource: 12, deprecatedFirstTimestamp: 13, deprecatedLastTimestamp: 14, deprecatedCount: 15,
      }, {
        eventTime: microTime('Time when this event was first observed. Required.'),
        series: obj('Data about the event series; nil for singleton events.', proto({ count: 1, lastObservedTime: 2 }, {
          count: int32('Number of occurrences in this series up to the last heartbeat time.'),
          lastObservedTime: microTime('Time of the last occurrence observed.'),
        }), ['count', 'lastObservedTime']),
        reportingController: str('Name of the controller that emitted this event, e.g. `orch.io/node-agent`. Required on creation.'),
        reportingInstance: str('ID of the controller instance, e.g. `node-agent-xyzf`. Required on creation.'),
        action: str('What action was taken or failed regarding the regarding object. Required on creation.'),
        reason: str('Why the action was taken; machine-readable, at most 128 characters. Required on creation.'),
        regarding: ref(n.core('ObjectReference'), 'The object this event is about (renamed from involvedObject).'),
        related: ref(n.core('ObjectReference'), 'Optional secondary object for more complex actions.'),
        note: str('Human-readable description of the status of this operation, at most 1 kB.'),
        type: str('Type of this event (Normal, Warning).'),
        deprecatedSource: obj('Deprecated field kept for backward compatibility; must be unset on creation.', proto({ component: 1, host: 2 }, {
          component: str('Component the event comes from.'),
          host: str('Node name the event comes from.'),
        })),
        deprecatedFirstTimestamp: time('Deprecated; must be unset on creation.'),
        deprecatedLastTimestamp: time('Deprecated; must be unset on creation.'),
        deprecatedCount: int32('Deprecated; must be unset on creation.', { 'x-orch-proto-omit-zero': true }),
      }),
      ['eventTime'],
    ),
    strategy: {
      validate: (o) => [...validateEventV1Common(o), ...validateEventV1Create(o)],
      validateUpdate: (o, old) => [...validateEventV1Common(o), ...eventV1UpdateErrors(o, old)],
      columns: [
        column('Last Seen', 'string', (o, now) => since(getString(o, 'series', 'lastObservedTime') ?? getString(o, 'eventTime'), now)),
        column('Type', 'string', (o) => getString(o, 'type') ?? ''),
        column('Reason', 'string', (o) => getString(o, 'reason') ?? ''),
        column('Object', 'string', (o) => `${(getString(o, 'regarding', 'kind') ?? '').toLowerCase()}/${getString(o, 'regarding', 'name') ?? ''}`),
        column('Message', 'string', (o) => getString(o, 'note') ?? ''),
      ],
      selectableFields: {
        'regarding.kind': fieldOf('regarding', 'kind'),
        'regarding.namespace': fieldOf('regarding', 'namespace'),
        'regarding.name': fieldOf('regarding', 'name'),
        'regarding.uid': fieldOf('regarding', 'uid'),
        // kube's events/v1 field label conversions map every involvedObject field of core/v1
        'regarding.apiVersion': fieldOf('regarding', 'apiVersion'),
        'regarding.resourceVersion': fieldOf('regarding', 'resourceVersion'),
        'regarding.fieldPath': fieldOf('regarding', 'fieldPath'),
        reason: fieldOf('reason'),
        reportingController: fieldOf('reportingController'),
        type: fieldOf('type'),
      },
    },
  };
}

const required = (field: string): FieldError => ({ field, type: 'FieldValueRequired', message: 'Required value' });
const tooLong = (field: string, n: number): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: "": can have at most ${n} characters` });

function validateEventV1Common(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const t = getString(o, 'type');
  if (t !== 'Normal' && t !== 'Warning') {
    errs.push({ field: 'type', type: 'FieldValueInvalid', message: `Invalid value: "": has invalid value: ${t ?? ''}` });
  }
  const ns = getString(o, 'regarding', 'namespace');
  if (ns && o.metadata?.namespace && ns !== o.metadata.namespace) {
    errs.push({ field: 'regarding.namespace', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(ns)}: does not match event.namespace` });
  }
  const series = getObject(o, 'series');
  if (series) {
    if (typeof series.count === 'number' && series.count < 2) {
      errs.push({ field: 'series.count', type: 'FieldValueInvalid', message: `Invalid value: "": should be at least 2` });
    }
  }
  return errs;
}

/** spec 000 §6: fields required on creation and deprecated fields forbidden on new objects */
function validateEventV1Create(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const rc = getString(o, 'reportingController') ?? '';
  if (!rc) errs.push(required('reportingController'));
  else for (const m of isQualifiedName(rc)) errs.push({ field: 'reportingController', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(rc)}: ${m}` });
  const ri = getString(o, 'reportingInstance') ?? '';
  if (!ri) errs.push(required('reportingInstance'));
  else if (ri.length > LIMIT_128) errs.push(tooLong('reportingInstance', LIMIT_128));
  const action = getString(o, 'action') ?? '';
  if (!action) errs.push(required('action'));
  else if (action.length > LIMIT_128) errs.push(tooLong('action', LIMIT_128));
  const reason = getString(o, 'reason') ?? '';
  if (!reason) errs.push(required('reason'));
  else if (reason.length > LIMIT_128) errs.push(tooLong('reason', LIMIT_128));
  const regarding = getObject(o, 'regarding');
  if (!regarding || Object.keys(regarding).length === 0) errs.push(required('regarding'));
  const note = getString(o, 'note') ?? '';
  if (note.length > 1024) errs.push(tooLong('note', 1024));
  for (const f of ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount'] as const) {
    const v = o[f];
    if (v !== undefined && v !== null && v !== 0 && v !== '') {
      errs.push({ field: f, type: 'FieldValueInvalid', message: 'Invalid value: "": needs to be unset' });
    }
  }
  const src = getObject(o, 'deprecatedSource');
  if (src && (src.component || src.host)) {
    errs.push({ field: 'deprecatedSource', type: 'FieldValueInvalid', message: 'Invalid value: "": needs to be unset' });
  }
  return errs;
}
