// One parser for the query of the collection verbs list, watch and
// deletecollection (Kubernetes' ListOptions, spec 000 §4.2, §4.5, §4.6): the
// selectors and versions are read once here, then each verb checks the
// combinations it allows as kube-apiserver's ValidateListOptions does: 422
// Invalid naming ListOptions.meta.k8s.io with one cause per rule broken (spec
// 000 §7 leaves the code of §4.6's invalid rows open; docs/watch.md).

import { badRequest, invalid } from '../core/errors.js';
import type { FieldError } from '../core/object.js';
import type { ListParams } from '../registry/list.js';
import { parseResourceVersion } from '../machinery/meta.js';
import { type FieldSelector, parseFieldSelector } from '../machinery/selectors/fields.js';
import { type LabelSelector, parseLabelSelector } from '../machinery/selectors/labels.js';
import { throwAsStatus } from '../registry/status-table.js';
import type { WatchParams } from '../watch/params.js';
import { boolParam, intValue } from './query-params.js';

/** The ListOptions of a collection request, parsed but not yet checked against a verb. */
export interface ListOptions {
  namespace: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  /** converted for every verb, as kube converts the whole query before it looks at the verb */
  limit?: number;
  continueToken?: string;
  /** as given; undefined = unset or empty */
  resourceVersion?: string;
  resourceVersionMatch?: string;
  /** undefined when the parameter is absent (Kubernetes treats absent and false differently) */
  sendInitialEvents?: boolean;
  allowWatchBookmarks: boolean;
  /** converted for every verb (a list ignores it, but a malformed one is kube's 400 there too) */
  timeoutSeconds?: number;
  /** `meta.<domain>`: the group its 422s name (kube's meta.k8s.io) */
  metaGroup: string;
}


export function parseListOptions(q: URLSearchParams, namespace: string, apiDomain: string): ListOptions {
  // kube converts the query into ListOptions first (its integers before the selectors are parsed), then validates
  const timeoutSeconds = intValue(q.get('timeoutSeconds') ?? undefined);
  const limit = intValue(q.get('limit') ?? undefined);
  let labelSelector: LabelSelector;
  let fieldSelector: FieldSelector;
  try {
    labelSelector = parseLabelSelector(q.get('labelSelector') ?? '');
    fieldSelector = parseFieldSelector(q.get('fieldSelector') ?? '');
  } catch (e) {
    throwAsStatus(e);
  }
  const rv = q.get('resourceVersion');
  return {
    namespace,
    labelSelector,
    fieldSelector,
    limit,
    continueToken: q.get('continue') || undefined,
    resourceVersion: rv === null || rv === '' ? undefined : rv,
    resourceVersionMatch: q.get('resourceVersionMatch') || undefined,
    sendInitialEvents: q.has('sendInitialEvents') ? boolParam(q, 'sendInitialEvents') : undefined,
    allowWatchBookmarks: boolParam(q, 'allowWatchBookmarks'),
    timeoutSeconds,
    metaGroup: `meta.${apiDomain}`,
  };
}

const forbidden = (field: string, why: string): FieldError => ({ field, type: 'FieldValueForbidden', message: `Forbidden: ${why}` });
const notSupported = (field: string, value: string, supported: string[]): FieldError => ({
  field,
  type: 'FieldValueNotSupported',
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}`,
});

/** kube's ValidateListOptions: every rule a list (watch false) or a watch breaks, in kube's order */
export function listOptionsErrors(o: ListOptions, watch: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch ?? '';
  if (watch) {
    if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
      errs.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    }
    if (match !== '') {
      if (o.sendInitialEvents === undefined) {
        errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      }
      if (match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      if (o.continueToken) errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
    return errs;
  }
  if (match !== '') {
    if (o.resourceVersion === undefined) {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    }
    if (o.continueToken) errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    // kube compares the string: `00` is not refused here (and reads as 0 below)
    if (match === 'Exact' && o.resourceVersion === '0') {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (o.sendInitialEvents !== undefined) errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

function checkListOptions(o: ListOptions, watch: boolean): void {
  const errs = listOptionsErrors(o, watch);
  if (errs.length > 0) throw invalid('ListOptions', o.metaGroup, '', errs);
}

/** list and deletecollection: the paging parameters */
export function listParams(o: ListOptions): ListParams {
  checkListOptions(o, false);
  // kube validates no limit: its storage pages only when limit > 0, so a negative one lists everything
  const limit = o.limit !== undefined && o.limit < 0 ? undefined : o.limit;
  return {
    namespace: o.namespace,
    labelSelector: o.labelSelector,
    fieldSelector: o.fieldSelector,
    limit,
    continueToken: o.continueToken,
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
  };
}

/** watch: validated the way Kubernetes validates watch ListOptions (spec 000 §4.2, §4.5) */
export function watchParams(o: ListOptions): WatchParams {
  const resourceVersion = parseResourceVersion(o.resourceVersion);
  const { sendInitialEvents } = o;
  // kube validates no timeoutSeconds: a negative one is a stream whose timer has already run out (200, no events)
  const { timeoutSeconds } = o;
  // spec 000 §4.2/§4.5: resourceVersionMatch on a watch only with sendInitialEvents, and then only NotOlderThan
  checkListOptions(o, true);
  if (o.continueToken) {
    throw badRequest('continue: Forbidden: continue is forbidden for watch');
  }
  return {
    labelSelector: o.labelSelector,
    fieldSelector: o.fieldSelector,
    resourceVersion,
    rawResourceVersion: o.resourceVersion,
    sendInitialEvents,
    allowWatchBookmarks: o.allowWatchBookmarks,
    timeoutSeconds: timeoutSeconds === 0 ? undefined : timeoutSeconds,
  };
}
