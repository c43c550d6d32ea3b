// apiregistration/v1 APIService, as kube-aggregator serves it: `kubectl get
// apiservices` and client libraries' discovery treat the group as any other.
// Local APIServices (no spec.service) name the group/versions this server
// serves and are always Available (src/controllers/local-apiservices.ts keeps
// them); one that points at a Service starts with no status and the
// availability controller (src/controllers/apiservice-availability.ts) probes
// it; its group is then proxied (docs/compatibility.md "API aggregation").

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getArray, getObject, getString } from './columns.js';
import { bool, int32, listMap, obj, proto, str, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { SPEC_STATUS_SHAPE } from '../zero-shape.js';

/** what kube's availability controller says of a local APIService */
const LOCAL = { reason: 'Local', message: 'Local APIServices are always available' };

export function apiServiceDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('apiregistration'), version: 'v1', kind: 'APIService', resource: 'apiservices', singular: 'apiservice', scope: 'Cluster',
    categories: ['api-extensions'],
    subresources: ['status'],
    // kube-aggregator checks a path segment (`v1.` names the core group), then `version.group`
    nameValidation: 'PathSegment',
    // kube-aggregator's generated.proto numbers
    schema: kindSchema(n, 'APIService represents a server for a particular GroupVersion. Name must be "version.group".', proto({ spec: 2, status: 3 }, {
      spec: obj('Spec contains information for locating and communicating with a server.', proto(
        { service: 1, group: 2, version: 3, insecureSkipTLSVerify: 4, caBundle: 5, groupPriorityMinimum: 7, versionPriority: 8 },
        {
          service: obj('The service this APIService is served by; absent for a local APIService (served by this server).', proto({ namespace: 1, name: 2, port: 3 }, {
            namespace: str('The namespace of the service.'),
            name: str('The name of the service.'),
            port: int32('The port on the service that hosts the webhook. Defaults to 443.'),
          })),
          group: str('The API group name this server hosts.'),
          version: str('The API version this server hosts, e.g. "v1".'),
          insecureSkipTLSVerify: bool('Disables TLS certificate verification when talking to this server.', { 'x-orch-proto-omit-zero': true }),
          caBundle: str('A PEM encoded CA bundle used to validate the API server\'s serving certificate.', { format: 'byte' }),
          groupPriorityMinimum: int32('The priority this group should have at least (1–20000).'),
          versionPriority: int32('The ordering of this API version inside its group (1–1000).'),
        },
      ), ['groupPriorityMinimum', 'versionPriority']),
      status: obj('Status contains derived information about an API server.', proto({ conditions: 1 }, {
        conditions: listMap('Current service state of apiService.', obj('Describes the state of an APIService at a particular point.', proto(
          { type: 1, status: 2, lastTransitionTime: 3, reason: 4, message: 5 },
          {
            type: str('Type is the type of the condition (Available).'),
            status: str('Status is the status of the condition: True, False or Unknown.'),
            lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
            reason: str("Unique, one-word, CamelCase reason for the condition's last transition."),
            message: str('Human-readable message indicating details about last transition.'),
          },
        ), ['type', 'status']), ['type'], 'type'),
      })),
    })),
    strategy: {
      zeroShape: SPEC_STATUS_SHAPE,
      validate: validateAPIService,
      validateUpdate: (o) => validateAPIService(o),
      prepareForCreate: (o) => setAvailability(o, undefined),
      prepareForUpdate: (o, old) => setAvailability(o, old),
      columns: [
        column('Service', 'string', (o) => serviceText(o)),
        column('Available', 'string', (o) => availableText(o)),
      ],
    },
  };
}

function serviceText(o: ApiObject): string {
  const svc = getObject(o, 'spec', 'service');
  return svc ? `${getString(svc, 'namespace') ?? ''}/${getString(svc, 'name') ?? ''}` : 'Local';
}

/** kube-aggregator's printer: the status, and the reason in brackets when not True */
function availableText(o: ApiObject): string {
  const c = getArray(o, 'status', 'conditions').find((x) => get(x, 'type') === 'Available');
  if (!c) return 'Unknown';
  const status = getString(c, 'status') ?? 'Unknown';
  const reason = getString(c, 'reason');
  return status === 'True' || !reason ? status : `${status} (${reason})`;
}

/**
 * The Available condition of a local APIService, derived from the spec: kube's
 * local availability controller reports them True. One with a Service is the
 * remote availability controller's: it starts with no status (kube's strategy
 * clears it on create) and keeps what that controller wrote.
 */
function setAvailability(o: ApiObject, old: ApiObject | undefined): void {
  if (getObject(o, 'spec', 'service')) {
    if (!old) o.status = {};
    return;
  }
  const want = { status: 'True', ...LOCAL };
  const before = old && getArray(old, 'status', 'conditions').find((x) => get(x, 'type') === 'Available');
  const same = before && getString(before, 'status') === want.status;
  // strategies have no clock: a new condition is dated by the object's creation (docs/compatibility.md)
  const lastTransitionTime = (same && getString(before, 'lastTransitionTime')) || o.metadata?.creationTimestamp;
  const condition: Record<string, string> = { type: 'Available', status: want.status };
  if (lastTransitionTime) condition.lastTransitionTime = lastTransitionTime;
  o.status = { conditions: [{ ...condition, reason: want.reason, message: want.message }] };
}

/** kube-aggregator's ValidateAPIService, the checks clients meet */
function validateAPIService(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  const group = typeof spec.group === 'string' ? spec.group : '';
  const version = typeof spec.version === 'string' ? spec.version : '';
  const name = o.metadata?.name ?? '';
  if (name !== `${version}.${group}`) {
    errs.push({ field: 'metadata.name', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(name)}: must be ${version}.${group}` });
  }
  if (version === '') errs.push({ field: 'spec.version', type: 'FieldValueRequired', message: 'Required value' });
  const gpm = spec.groupPriorityMinimum;
  if (typeof gpm !== 'number' || gpm <= 0 || gpm > 20000) {
    errs.push({ field: 'spec.groupPriorityMinimum', type: 'FieldValueInvalid', message: `Invalid value: ${String(gpm)}: must be positive and less than 20000` });
  }
  const vp = spec.versionPriority;
  if (typeof vp !== 'number' || vp <= 0 || vp > 1000) {
    errs.push({ field: 'spec.versionPriority', type: 'FieldValueInvalid', message: `Invalid value: ${String(vp)}: must be positive and less than 1000` });
  }
  if (!spec.service && (spec.insecureSkipTLSVerify === true || spec.caBundle)) {
    errs.push({ field: 'spec.insecureSkipTLSVerify', type: 'FieldValueInvalid', message: 'Invalid value: true: local APIservices may not have insecureSkipTLSVerify or caBundle' });
  }
  return errs;
}
