// certificates/v1 CertificateSigningRequest: approved or denied by clients
// (`kubectl certificate approve`) or the csrapproving controller, signed by the
// csrsigning controller for the built-in signers (src/controllers/certificates/).
// As kube's strategy, a create records who asked (spec.username, uid, groups,
// extra) and starts with no conditions, and status updates stamp the
// conditions' times; validation is kube's (csr-validation.ts). kubectl's table
// is kube's printer: Name, Age, SignerName, Requestor, RequestedDuration, Condition.

import type { UserInfo } from '../../auth/types.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../types.js';
import { humanDuration } from '../table.js';
import { column, fieldOf, get, getArray, getString } from './columns.js';
import { atomicList, int32, mapOf, obj, proto, str, time } from '../../machinery/schema/dsl.js';
import type { Schema } from '../../machinery/schema/types.js';
import { kindSchema } from './meta.js';
import { nowTimestamp } from '../../machinery/meta.js';
import { signerNamesOf } from '../../core/product-names.js';
import { populateConditionTimestamps, validateCsr, validateCsrUpdate } from './csr-validation.js';
import { SPEC_STATUS_SHAPE } from '../zero-shape.js';

const strings = (d: string): Schema => atomicList(d, { type: 'string' });

export function certificateSigningRequestDefinition(n: SchemaNames): ResourceDefinition {
  const legacySigner = signerNamesOf(n.apiDomain).legacyUnknown;
  return {
    group: n.group('certificates'), version: 'v1', kind: 'CertificateSigningRequest', resource: 'certificatesigningrequests', singular: 'certificatesigningrequest', scope: 'Cluster',
    shortNames: ['csr'], subresources: ['status', 'approval'],
    // kube: "We don't care what you call your certificate requests" (kubelet's are base64url digests)
    nameValidation: 'PathSegment',
    // the `approval` sub-resource's handlers are src/endpoints/handlers/builtin-kinds.ts (the server attaches them)
    schema: kindSchema(n, 'CertificateSigningRequest objects request a signed X.509 certificate (signed by the csrsigning controller for the built-in signers).', proto({ spec: 2, status: 3 }, {
      spec: obj('The certificate request.', proto({ request: 1, signerName: 7, expirationSeconds: 8, usages: 5, username: 2, uid: 3, groups: 4, extra: 6 }, {
        request: str('A base64-encoded PEM "CERTIFICATE REQUEST" block.', { format: 'byte' }),
        signerName: str('The requested signer.'),
        expirationSeconds: int32('The requested duration of validity of the issued certificate.'),
        usages: strings('Key usages requested in the issued certificate.'),
        username: str('The user that created the request (set by the server).'),
        uid: str('The uid of the user that created the request (set by the server).'),
        groups: strings('The groups of the user that created the request (set by the server).'),
        extra: mapOf('Extra attributes of the user (set by the server).', strings('Values.')),
      }), ['request', 'signerName']),
      status: obj('The state of the request.', proto({ conditions: 1, certificate: 2 }, {
        // CertificateSigningRequestCondition: status is 6 (added after the others)
        conditions: atomicList('Applied conditions (Approved, Denied, Failed).', obj('A condition.', proto({ type: 1, status: 6, reason: 2, message: 3, lastUpdateTime: 4, lastTransitionTime: 5 }, {
          type: str('Type of the condition: Approved, Denied or Failed.'),
          status: str('Status of the condition, one of True, False, Unknown.'),
          reason: str('Brief reason for the request state.'),
          message: str('Human readable message with details about the request state.'),
          lastUpdateTime: time('Time of the last update to this condition.'),
          lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
        }), ['type'])),
        certificate: str('The issued certificate (PEM).', { format: 'byte' }),
      })),
    })),
    strategy: {
      zeroShape: SPEC_STATUS_SHAPE,
      prepareForCreate: recordRequester,
      selectableFields: { 'spec.signerName': fieldOf('spec', 'signerName') },
      validate: (o) => validateCsr(o, legacySigner),
      validateUpdate: (o, old, sub) => validateCsrUpdate(o, old, legacySigner, sub === 'approval'),
      prepareForUpdate: (o, old, now, sub) => {
        separateApproval(o, old, sub);
        populateConditionTimestamps(o, old, nowTimestamp(now));
      },
      columns: [
        column('Age', 'string', () => null),
        column('SignerName', 'string', (o) => getString(o, 'spec', 'signerName') || '<none>'),
        column('Requestor', 'string', (o) => getString(o, 'spec', 'username') ?? ''),
        column('RequestedDuration', 'string', requestedDuration),
        column('Condition', 'string', conditionText),
      ],
    },
  };
}


/** kube's csrStrategy.PrepareForCreate: the requester comes from the request, never from the body; no condition yet */
function recordRequester(o: ApiObject, user?: UserInfo): void {
  const spec = (o.spec ?? {}) as Record<string, JSONValue>;
  o.spec = spec;
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  if (user) {
    spec.username = user.username;
    if (user.uid) spec.uid = user.uid;
    if (user.groups.length > 0) spec.groups = [...user.groups];
    if (user.extra && Object.keys(user.extra).length > 0) spec.extra = structuredClone(user.extra);
  }
  o.status = {};
}

function requestedDuration(o: ApiObject): string {
  const s = get(o, 'spec', 'expirationSeconds');
  return typeof s === 'number' ? humanDuration(s * 1000) : '<none>';
}

/** kube's extractCSRStatus: Denied over Approved over Pending, then Failed and Issued */
function conditionText(o: ApiObject): string {
  const types = new Set(getArray(o, 'status', 'conditions').map((c) => getString(c, 'type')));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (getString(o, 'status', 'certificate')) s += ',Issued';
  return s;
}

type Condition = Record<string, JSONValue>;

/**
 * kube keeps approval and issuance apart (csrStatusStrategy, csrApprovalStrategy):
 * `/status` keeps the stored Approved/Denied conditions where the written ones
 * stand (preserveConditionInstances: only when as many of a type are written as
 * are stored; adding or dropping one is left for validation to refuse), and
 * `/approval` changes only the conditions (the stored certificate is kept)
 */
function separateApproval(o: ApiObject, old: ApiObject, sub: string | undefined): void {
  if (sub !== 'status' && sub !== 'approval') return;
  const oldStatus = (old.status ?? {}) as Record<string, JSONValue>;
  const status = (o.status ?? {}) as Record<string, JSONValue>;
  const conds = (x: Record<string, JSONValue>) => (Array.isArray(x.conditions) ? (x.conditions as Condition[]) : []);
  if (sub === 'status') {
    for (const type of ['Approved', 'Denied']) preserveConditionInstances(conds(status), conds(oldStatus), type);
  } else {
    const next: Record<string, JSONValue> = { ...oldStatus, conditions: conds(status) };
    if (conds(status).length === 0) delete next.conditions;
    o.status = next;
  }
}

/** kube's preserveConditionInstances: the stored conditions of `type` replace the written ones, in place, when their counts match */
function preserveConditionInstances(next: Condition[], old: Condition[], type: string): void {
  const indices = (cs: Condition[]) => cs.flatMap((c, i) => (c.type === type ? [i] : []));
  const [oldAt, newAt] = [indices(old), indices(next)];
  if (oldAt.length !== newAt.length) return;
  oldAt.forEach((from, i) => (next[newAt[i]!] = old[from]!));
}
