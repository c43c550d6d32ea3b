// apiextensions.<domain>/v1 CustomResourceDefinition (issue #16; spec 000 §9.3
// CRD row): the kind users create to add kinds. The object is stored like any
// other; serving its kind is the registrar's job (src/controllers/crd-registrar.ts),
// conditions and cleanup are the CRD controller's (src/controllers/crd-controller.ts).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import { column } from '../kinds/columns.js';
import { atomicList, bool, int32, listMap, obj, opaque, proto, str } from '../../machinery/schema/dsl.js';
import { kindSchema } from '../kinds/meta.js';
import { condition } from '../kinds/workload-shared.js';
import { webhookClientConfigSchema } from '../admission/kinds.js';
import { markerPrefixes } from './convert.js';
import { validateCrd, validateCrdUpdate } from './validate.js';

export function crdGroup(apiDomain: string): string {
  return `apiextensions.${apiDomain}`;
}

/** the finalizer that holds a deleted CRD until its objects are gone */
export function cleanupFinalizer(apiDomain: string): string {
  return `customresourcecleanup.${crdGroup(apiDomain)}`;
}

/** a non-pointer Go bool or number with omitempty: a protobuf 0/false is absent (x-orch-proto-omit-zero) */
const omitZero = { 'x-orch-proto-omit-zero': true } as const;

// protobuf field numbers: Kubernetes' apiextensions/v1 generated.proto (docs/protobuf.md)
function crdSchema(n: SchemaNames): Schema {
  const names = obj('Names the custom kind is served under.', proto({ plural: 1, singular: 2, shortNames: 3, kind: 4, listKind: 5, categories: 6 }, {
    plural: str('Plural resource name in URLs (`/apis/<group>/<version>/<plural>`); lowercase. The CRD is named `<plural>.<group>`.'),
    singular: str('Singular name, lowercase; defaults to the lowercased kind.'),
    shortNames: atomicList('Short names for the resource (e.g. `kubectl get <shortName>`); lowercase.', { type: 'string' }),
    kind: str('Serialized kind, CamelCase.'),
    listKind: str('Kind of lists; defaults to `<kind>List`.'),
    categories: atomicList('Groups of resources the kind belongs to (e.g. `all`), used by `kubectl get <category>`.', { type: 'string' }),
  }), ['plural', 'kind']);
  const column_ = obj('A column in Table output (kubectl get).', proto({ name: 1, type: 2, format: 3, description: 4, priority: 5, jsonPath: 6 }, {
    name: str('Column name.'),
    type: str('integer, number, string, boolean or date.'),
    format: str('Optional format hint: int32, int64, float, double, byte, date, date-time, password.'),
    description: str('Column description.'),
    priority: int32('0 for the standard view; higher only in wide output.', omitZero),
    jsonPath: str('Simple JSONPath (`.spec.replicas`) evaluated on each object for the cell.'),
    // name, type and jsonPath are required by validate.ts (kube's ValidateCustomResourceColumnDefinition),
    // once and at kube's path, not here too
  }));
  const version = obj('One version of the custom kind.', proto({ name: 1, served: 2, storage: 3, deprecated: 7, deprecationWarning: 8, schema: 4, subresources: 5, additionalPrinterColumns: 6, selectableFields: 9 }, {
    name: str('Version name (e.g. v1, v1beta1), served at `/apis/<group>/<name>/...`.'),
    served: bool('Whether the version is served.'),
    storage: bool('Whether objects are stored in this version; exactly one version is.'),
    deprecated: bool('Requests to a deprecated version get a Warning header.', omitZero),
    deprecationWarning: str('Overrides the default warning returned to clients.'),
    schema: obj('Validation schema of this version.', proto({ openAPIV3Schema: 1 }, {
      // JSONSchemaProps: recursive, with union fields; its own codec (machinery/protobuf/json-schema-props.ts)
      openAPIV3Schema: {
        ...opaque('Structural OpenAPI v3 schema (types, formats, enums, required, bounds, pattern, nullable, defaults, x-<domain>-* markers, x-<domain>-validations CEL rules).'),
        'x-orch-proto-type': 'JSONSchemaProps',
        'x-orch-proto-marker-prefixes': markerPrefixes(n.apiDomain),
      },
    })),
    subresources: obj('Sub-resources served.', proto({ status: 1, scale: 2 }, {
      // an empty message in Kubernetes (CustomResourceSubresourceStatus): `{}` is its only form
      status: obj('Enables /status: the main resource ignores status changes, /status ignores everything else.', {}),
      scale: obj('Enables /scale (autoscaling/v1 Scale).', proto({ specReplicasPath: 1, statusReplicasPath: 2, labelSelectorPath: 3 }, {
        specReplicasPath: str('JSON path of the desired replicas, under .spec.'),
        statusReplicasPath: str('JSON path of the observed replicas, under .status.'),
        labelSelectorPath: str('JSON path of the label selector string, under .spec or .status.'),
      }), ['specReplicasPath', 'statusReplicasPath']),
    })),
    additionalPrinterColumns: atomicList('Extra columns in Table output.', column_),
    selectableFields: atomicList('Fields usable in field selectors.', obj('A selectable field.', proto({ jsonPath: 1 }, { jsonPath: str('JSON path of the field.') }), ['jsonPath'])),
  }), ['name', 'served', 'storage']);
  // CustomResourceDefinitionCondition: type 1, status 2, lastTransitionTime 3, reason 4, message 5
  // kube validates no condition of a CRD's status (ValidateCustomResourceDefinitionStatus: the
  // accepted names only); the e2e status test writes conditions of a message alone
  const { required: _required, ...crdCondition } = condition('workload');
  return kindSchema(n, 'CustomResourceDefinition describes a custom kind served by the API server at run time.', proto({ spec: 2, status: 3 }, {
    spec: obj('The custom kind.', proto({ group: 1, names: 3, scope: 4, versions: 7, conversion: 9, preserveUnknownFields: 10 }, {
      group: str('API group of the kind (a DNS subdomain with at least one dot).'),
      names: names,
      // no enum: validate.ts reports a bad scope once, in kube's words and order
      scope: str('Namespaced or Cluster.'),
      versions: listMap('Versions served; exactly one is the storage version.', version, ['name'], 'name'),
      conversion: obj('How objects convert between versions.', proto({ strategy: 1, webhook: 2 }, {
        strategy: str('None (the default: only apiVersion changes) or Webhook (a ConversionReview to the webhook converts).'),
        webhook: obj('The conversion webhook (strategy Webhook only).', proto({ clientConfig: 2, conversionReviewVersions: 3 }, {
          clientConfig: webhookClientConfigSchema(),
          conversionReviewVersions: atomicList('ConversionReview versions the webhook accepts, preferred first.', { type: 'string' }),
        })),
      })),
      preserveUnknownFields: bool('Must be false (apiextensions v1); use x-<domain>-preserve-unknown-fields in the schema.', omitZero),
    }), ['group', 'names', 'scope', 'versions']),
    status: obj('Observed state of the definition.', proto({ conditions: 1, acceptedNames: 2, storedVersions: 3 }, {
      conditions: listMap('Established, NamesAccepted, Terminating.', crdCondition, ['type'], 'type'),
      acceptedNames: names,
      storedVersions: atomicList('Versions objects have ever been stored in.', { type: 'string' }),
    })),
  }), ['spec']);
}

export interface CrdKindOptions {
  /** groups served by built-in kinds: a CRD may not claim them */
  reservedGroups: () => ReadonlySet<string>;
}

export function crdDefinition(n: SchemaNames, o: CrdKindOptions): ResourceDefinition {
  const finalizer = cleanupFinalizer(n.apiDomain);
  const ctx = { apiDomain: n.apiDomain, reservedGroups: o.reservedGroups };
  return {
    group: crdGroup(n.apiDomain),
    version: 'v1',
    kind: 'CustomResourceDefinition',
    resource: 'customresourcedefinitions',
    // kube's CRD Delete marks it (cleanup finalizer) and answers the CRD, never a Status
    returnDeletedObject: true,
    singular: 'customresourcedefinition',
    scope: 'Cluster',
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    subresources: ['status'],
    schema: crdSchema(n),
    strategy: {
      tracksGeneration: true,
      // CustomResourceDefinitionStatus.acceptedNames is a non-pointer struct whose plural and kind have no omitempty
      zeroShape: { spec: {}, status: { acceptedNames: { plural: '', kind: '' } } },
      default: (c) => defaultCrd(c),
      validate: (c) => validateCrd(c, ctx),
      validateUpdate: (c, old) => validateCrdUpdate(c, old, ctx),
      // the cleanup finalizer from the start, so a delete always empties the kind first (docs/crds.md)
      prepareForCreate: (c) => {
        const meta = c.metadata!;
        const fins = Array.isArray(meta.finalizers) ? meta.finalizers : [];
        if (!fins.includes(finalizer)) meta.finalizers = [...fins, finalizer];
        // kube's PrepareForCreate: a fresh status that records the storage version (storedVersions has no omitempty)
        const versions = (c.spec as J | undefined)?.versions;
        const storage = Array.isArray(versions) ? (versions as J[]).find((v) => v?.storage === true)?.name : undefined;
        if (typeof storage === 'string') c.status = { storedVersions: [storage] };
      },
      columns: [column('Created At', 'date', (c) => c.metadata?.creationTimestamp ?? null)],
      exactColumns: true,
    },
  };
}

type J = Record<string, unknown>;

/** names.singular and listKind, conversion None, versions' served/storage flags absent stay absent (required) */
function defaultCrd(c: ApiObject): void {
  const spec = c.spec as J | undefined;
  if (!spec || typeof spec !== 'object') return;
  const names = spec.names as J | undefined;
  if (names && typeof names === 'object') {
    if (typeof names.kind === 'string' && (names.singular === undefined || names.singular === '')) names.singular = names.kind.toLowerCase();
    if (typeof names.kind === 'string' && (names.listKind === undefined || names.listKind === '')) names.listKind = `${names.kind}List`;
  }
  if (spec.conversion === undefined) spec.conversion = { strategy: 'None' };
  else if (spec.conversion && typeof spec.conversion === 'object') {
    const conv = spec.conversion as J;
    if (conv.strategy === undefined) conv.strategy = 'None';
    // kube's SetDefaults_ServiceReference: a conversion webhook's service port is 443
    const service = ((conv.webhook as J | undefined)?.clientConfig as J | undefined)?.service as J | undefined;
    if (service && typeof service === 'object' && service.port === undefined) service.port = 443;
  }
}
