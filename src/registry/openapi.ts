// The served OpenAPI documents, built from the registered definitions:
//   /openapi/v2                  one Swagger 2.0 document
//   /openapi/v3                  the index of group-version documents
//   /openapi/v3/api/v1, /openapi/v3/apis/<g>/<v>   OpenAPI 3.0 documents
// Names follow naming.ts. Every `x-orch-*` marker is emitted together with its
// `x-kubernetes-*` twin because kubectl reads only the latter (patch merge
// keys, list types, group-version-kind, int-or-string, preserve-unknown);
// docs/schemas.md records that decision. Documents are built once per
// registry version and served with their SHA-512 hash.

import { createHash } from 'node:crypto';
import type { ResourceDefinition } from './types.js';
import { definitionName, SchemaNames } from '../machinery/schema/naming.js';
import type { Definitions, Schema } from '../machinery/schema/types.js';
import { patchMediaTypes } from '../machinery/patch/media-types.js';

type Json = Record<string, unknown>;
type Version = 2 | 3;

/** what the documents are built from (the Registry satisfies it) */
export interface OpenAPISource {
  readonly apiDomain: string;
  readonly defs: Definitions;
  /** changes whenever the served definitions change */
  readonly version: number;
  all(): ResourceDefinition[];
}

export interface ServedDocument {
  json: string;
  /** upper-case hex SHA-512 of `json`, as Kubernetes publishes it */
  hash: string;
  /** the document itself (do not mutate) */
  doc: Json;
}

export interface OpenAPIInfo {
  title?: string;
  version?: string;
}

const MARKER_TWINS: [string, string][] = [
  ['x-orch-list-type', 'x-kubernetes-list-type'],
  ['x-orch-list-map-keys', 'x-kubernetes-list-map-keys'],
  ['x-orch-map-type', 'x-kubernetes-map-type'],
  ['x-orch-patch-strategy', 'x-kubernetes-patch-strategy'],
  ['x-orch-patch-merge-key', 'x-kubernetes-patch-merge-key'],
  ['x-orch-preserve-unknown-fields', 'x-kubernetes-preserve-unknown-fields'],
  ['x-orch-int-or-string', 'x-kubernetes-int-or-string'],
  ['x-orch-embedded-resource', 'x-kubernetes-embedded-resource'],
];

const PLAIN_KEYS = ['description', 'format', 'enum', 'nullable', 'required', 'minimum', 'maximum', 'maxLength', 'minLength', 'maxItems', 'pattern'] as const;

function refPath(name: string, v: Version): string {
  return v === 2 ? `#/definitions/${name}` : `#/components/schemas/${name}`;
}

/** a Schema as it appears in a served document (refs rewritten, markers twinned) */
export function toOpenAPISchema(s: Schema, v: Version, refs?: Set<string>): Json {
  if (s.$ref !== undefined) {
    refs?.add(s.$ref);
    const $ref = refPath(s.$ref, v);
    if (v === 2) return s.description !== undefined ? { $ref, description: s.description } : { $ref };
    if (s.description === undefined && s.default === undefined) return { $ref };
    const out: Json = { allOf: [{ $ref }] };
    if (s.description !== undefined) out.description = s.description;
    if (s.default !== undefined) out.default = s.default;
    return out;
  }
  const out: Json = {};
  if (s['x-orch-int-or-string']) {
    // Kubernetes' own spelling: v2 has a string type (format int-or-string), v3 a union
    if (v === 2) {
      out.type = 'string';
      if (s.format !== 'quantity') out.format = 'int-or-string';
    } else {
      out.anyOf = s.format === 'quantity' ? [{ type: 'string' }, { type: 'number' }] : [{ type: 'integer' }, { type: 'string' }];
    }
  } else if (s.type !== undefined) out.type = s.type;
  for (const k of PLAIN_KEYS) {
    if (s[k] === undefined) continue;
    if (k === 'format' && (s.format === 'quantity' || out.format !== undefined || s['x-orch-int-or-string'])) continue;
    if (k === 'nullable' && v === 2) continue;
    out[k] = s[k];
  }
  if (s.default !== undefined) out.default = s.default;
  if (s.properties) {
    const props: Json = {};
    for (const [k, child] of Object.entries(s.properties)) props[k] = toOpenAPISchema(child, v, refs);
    out.properties = props;
  }
  if (s.additionalProperties !== undefined) {
    out.additionalProperties = typeof s.additionalProperties === 'boolean' ? s.additionalProperties : toOpenAPISchema(s.additionalProperties, v, refs);
  }
  if (s.items) out.items = toOpenAPISchema(s.items, v, refs);
  for (const [orch, kube] of MARKER_TWINS) {
    const val = s[orch as keyof Schema];
    if (val === undefined) continue;
    out[orch] = val;
    out[kube] = val;
  }
  return out;
}

interface GVK {
  group: string;
  version: string;
  kind: string;
}

function gvkExtension(gvk: GVK): Json {
  const list = [{ group: gvk.group, kind: gvk.kind, version: gvk.version }];
  return { 'x-kubernetes-group-version-kind': list, 'x-orch-group-version-kind': list };
}

function opGvk(gvk: GVK): Json {
  const one = { group: gvk.group, kind: gvk.kind, version: gvk.version };
  return { 'x-kubernetes-group-version-kind': one, 'x-orch-group-version-kind': one };
}

/** `rbac.authorization.orch.io` → `RbacAuthorization`; core → `Core`; `stable.example.com` → `StableExampleCom` */
function groupPascal(group: string, apiDomain: string): string {
  if (group === '') return 'Core';
  const g = group.endsWith(`.${apiDomain}`) ? group.slice(0, -apiDomain.length - 1) : group;
  return g
    .split(/[.-]/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

function groupTag(group: string, version: string, apiDomain: string): string {
  const p = groupPascal(group, apiDomain);
  return `${p.charAt(0).toLowerCase()}${p.slice(1)}_${version}`;
}

// ---- parameters (spec 000 §4.2) ----

interface Param {
  name: string;
  in: 'query' | 'path' | 'body';
  description: string;
  type?: string;
  required?: boolean;
  schemaRef?: string;
}

const q = (name: string, type: string, description: string): Param => ({ name, in: 'query', type, description });

const P = {
  pretty: q('pretty', 'string', "If 'true', the output is pretty printed."),
  dryRun: q('dryRun', 'string', 'When present, modifications are not persisted. Valid values: All (every stage runs but storage) (spec 000 §4.7).'),
  fieldManager: q('fieldManager', 'string', 'Name of the actor making the change; required for apply patches.'),
  fieldValidation: q(
    'fieldValidation',
    'string',
    'How unknown and duplicate fields in the body are handled: Ignore (drop silently), Warn (drop with a Warning header each; the default) or Strict (fail the request) (spec 000 §4.8).',
  ),
  force: q('force', 'boolean', 'Force an apply request: take ownership of fields owned by other managers. Only for apply patches.'),
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Request BOOKMARK watch events.'),
  continue: q('continue', 'string', 'Continue token from a previous paged list (spec 000 §4.5).'),
  fieldSelector: q('fieldSelector', 'string', 'Restrict the returned objects by their fields.'),
  labelSelector: q('labelSelector', 'string', 'Restrict the returned objects by their labels.'),
  limit: q('limit', 'integer', 'Maximum number of items for a list call; the response carries a continue token when more exist.'),
  resourceVersion: q('resourceVersion', 'string', 'Constraint on the resource version of the data served (spec 000 §4.6).'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion applies to list calls: Exact or NotOlderThan.'),
  sendInitialEvents: q('sendInitialEvents', 'boolean', 'Start a watch with synthetic ADDED events for existing objects (streaming list).'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Timeout for list/watch calls.'),
  watch: q('watch', 'boolean', 'Watch for changes and stream add, update and remove notifications.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'Seconds before the object is deleted.'),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  propagationPolicy: q('propagationPolicy', 'string', 'Garbage collection: Orphan, Background or Foreground.'),
  ignoreStoreReadError: q(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'Force-delete an object that cannot be read from storage (spec 000 §4.10).',
  ),
  name: { name: 'name', in: 'path', type: 'string', required: true, description: 'name of the object' } as Param,
  namespace: { name: 'namespace', in: 'path', type: 'string', required: true, description: 'object name and auth scope, such as for teams and projects' } as Param,
};

const LIST_PARAMS = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadError, P.orphanDependents, P.propagationPolicy];

/** custom resources take no strategic merge patch (spec 000 §4.3); the document lists them sorted */
function patchTypes(def: ResourceDefinition): string[] {
  return patchMediaTypes(def.customResource === true).sort();
}

interface OpSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  action: string;
  operationId: string;
  description: string;
  params: Param[];
  body?: string;
  bodyIsPatch?: boolean;
  /** response definition name */
  response: string;
  created?: boolean;
  deprecated?: boolean;
}

interface PathSpec {
  path: string;
  pathParams: Param[];
  ops: OpSpec[];
}

function resourcePaths(def: ResourceDefinition, n: SchemaNames): PathSpec[] {
  const prefix = def.group === '' ? `/api/${def.version}` : `/apis/${def.group}/${def.version}`;
  const verbs = new Set(def.verbs ?? ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  const gv = `${groupPascal(def.group, n.apiDomain)}${def.version.charAt(0).toUpperCase()}${def.version.slice(1)}`;
  const K = def.kind;
  const kindName = definitionName(n.apiDomain, def.group, def.version, K);
  const listName = `${kindName}List`;
  const status = n.meta('Status');
  const watchEvent = n.meta('WatchEvent');
  const namespaced = def.scope === 'Namespaced';
  const ns = namespaced ? 'Namespaced' : '';
  const nsPath = namespaced ? '/namespaces/{namespace}' : '';
  const scopeParams = namespaced ? [P.namespace] : [];
  const out: PathSpec[] = [];

  const collection: OpSpec[] = [];
  if (verbs.has('list')) {
    collection.push({ method: 'get', action: 'list', operationId: `list${gv}${ns}${K}`, description: `list or watch objects of kind ${K}`, params: LIST_PARAMS, response: listName });
  }
  if (verbs.has('create')) {
    collection.push({ method: 'post', action: 'post', operationId: `create${gv}${ns}${K}`, description: `create a ${K}`, params: WRITE_PARAMS, body: kindName, response: kindName, created: true });
  }
  if (verbs.has('deletecollection')) {
    collection.push({
      method: 'delete',
      action: 'deletecollection',
      operationId: `deletecollection${gv}${ns}${K}`,
      description: `delete collection of ${K}`,
      params: [...DELETE_PARAMS, ...LIST_PARAMS.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks')],
      body: n.meta('DeleteOptions'),
      response: status,
    });
  }
  if (collection.length > 0) out.push({ path: `${prefix}${nsPath}/${def.resource}`, pathParams: [...scopeParams, P.pretty], ops: collection });

  const item: OpSpec[] = [];
  if (verbs.has('get')) item.push({ method: 'get', action: 'get', operationId: `read${gv}${ns}${K}`, description: `read the specified ${K}`, params: [], response: kindName });
  if (verbs.has('update')) {
    item.push({ method: 'put', action: 'put', operationId: `replace${gv}${ns}${K}`, description: `replace the specified ${K}`, params: WRITE_PARAMS, body: kindName, response: kindName, created: true });
  }
  if (verbs.has('delete')) {
    item.push({ method: 'delete', action: 'delete', operationId: `delete${gv}${ns}${K}`, description: `delete a ${K}`, params: DELETE_PARAMS, body: n.meta('DeleteOptions'), response: status });
  }
  if (verbs.has('patch')) {
    item.push({
      method: 'patch',
      action: 'patch',
      operationId: `patch${gv}${ns}${K}`,
      description: `partially update the specified ${K}`,
      params: [...WRITE_PARAMS, P.force],
      body: n.meta('Patch'),
      bodyIsPatch: true,
      response: kindName,
      created: true,
    });
  }
  if (item.length > 0) out.push({ path: `${prefix}${nsPath}/${def.resource}/{name}`, pathParams: [P.name, ...scopeParams, P.pretty], ops: item });

  if (def.subresources?.includes('status')) {
    const st: OpSpec[] = [{ method: 'get', action: 'get', operationId: `read${gv}${ns}${K}Status`, description: `read status of the specified ${K}`, params: [], response: kindName }];
    if (verbs.has('update')) {
      st.push({ method: 'put', action: 'put', operationId: `replace${gv}${ns}${K}Status`, description: `replace status of the specified ${K}`, params: WRITE_PARAMS, body: kindName, response: kindName, created: true });
    }
    if (verbs.has('patch')) {
      st.push({
        method: 'patch',
        action: 'patch',
        operationId: `patch${gv}${ns}${K}Status`,
        description: `partially update status of the specified ${K}`,
        params: [...WRITE_PARAMS, P.force],
        body: n.meta('Patch'),
        bodyIsPatch: true,
        response: kindName,
        created: true,
      });
    }
    out.push({ path: `${prefix}${nsPath}/${def.resource}/{name}/status`, pathParams: [P.name, ...scopeParams, P.pretty], ops: st });
  }

  if (namespaced && verbs.has('list')) {
    out.push({
      path: `${prefix}/${def.resource}`,
      pathParams: [P.pretty],
      ops: [{ method: 'get', action: 'list', operationId: `list${gv}${K}ForAllNamespaces`, description: `list or watch objects of kind ${K}`, params: LIST_PARAMS, response: listName }],
    });
  }
  if (verbs.has('watch')) {
    const watchOps = (action: string, id: string, desc: string): OpSpec[] => [
      { method: 'get', action, operationId: id, description: `${desc}. deprecated: use the 'watch' parameter with a list operation instead.`, params: LIST_PARAMS, response: watchEvent, deprecated: true },
    ];
    out.push({ path: `${prefix}/watch${nsPath}/${def.resource}`, pathParams: [...scopeParams, P.pretty], ops: watchOps('watchlist', `watch${gv}${ns}${K}List`, `watch individual changes to a list of ${K}`) });
    out.push({ path: `${prefix}/watch${nsPath}/${def.resource}/{name}`, pathParams: [P.name, ...scopeParams, P.pretty], ops: watchOps('watch', `watch${gv}${ns}${K}`, `watch changes to an object of kind ${K}`) });
    if (namespaced) {
      out.push({ path: `${prefix}/watch/${def.resource}`, pathParams: [P.pretty], ops: watchOps('watchlist', `watch${gv}${K}ListForAllNamespaces`, `watch individual changes to a list of ${K}`) });
    }
  }
  return out;
}

const RESPONSE_TYPES = ['application/json', 'application/yaml', 'application/vnd.orch.protobuf'];
const WATCH_TYPES = ['application/json', 'application/yaml', 'application/vnd.orch.protobuf', 'application/json;stream=watch', 'application/vnd.orch.protobuf;stream=watch'];

function v2Param(p: Param): Json {
  const out: Json = { name: p.name, in: p.in, description: p.description };
  if (p.type) out.type = p.type;
  if (p.required) out.required = true;
  if (p.in === 'query') out.uniqueItems = true;
  return out;
}

function v3Param(p: Param): Json {
  const out: Json = { name: p.name, in: p.in, description: p.description, schema: { type: p.type ?? 'string', uniqueItems: true } };
  if (p.required) out.required = true;
  return out;
}

function buildPathsV2(defs: ResourceDefinition[], n: SchemaNames): Json {
  const paths: Json = {};
  for (const def of defs) {
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    const tag = groupTag(def.group, def.version, n.apiDomain);
    for (const ps of resourcePaths(def, n)) {
      const item: Json = { parameters: ps.pathParams.map(v2Param) };
      for (const op of ps.ops) {
        const params = op.params.map(v2Param);
        if (op.body) params.unshift({ name: 'body', in: 'body', required: !op.body.endsWith('DeleteOptions'), schema: { $ref: refPath(op.body, 2) } });
        const responses: Json = { '200': { description: 'OK', schema: { $ref: refPath(op.response, 2) } }, '401': { description: 'Unauthorized' } };
        if (op.created) responses['201'] = { description: 'Created', schema: { $ref: refPath(op.response, 2) } };
        if (op.method === 'delete' && op.action === 'delete') responses['202'] = { description: 'Accepted', schema: { $ref: refPath(op.response, 2) } };
        item[op.method] = {
          description: op.description,
          operationId: op.operationId,
          consumes: op.bodyIsPatch ? patchTypes(def) : ['*/*'],
          produces: op.action.startsWith('watch') || op.action === 'list' ? WATCH_TYPES : RESPONSE_TYPES,
          schemes: ['https'],
          tags: [tag],
          parameters: params,
          responses,
          'x-kubernetes-action': op.action,
          'x-orch-action': op.action,
          ...opGvk(gvk),
          ...(op.deprecated ? { deprecated: true } : {}),
        };
      }
      paths[ps.path] = item;
    }
  }
  return paths;
}

function buildPathsV3(defs: ResourceDefinition[], n: SchemaNames): Json {
  const paths: Json = {};
  for (const def of defs) {
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    const tag = groupTag(def.group, def.version, n.apiDomain);
    for (const ps of resourcePaths(def, n)) {
      const item: Json = { parameters: ps.pathParams.map(v3Param) };
      for (const op of ps.ops) {
        const types = op.action.startsWith('watch') || op.action === 'list' ? WATCH_TYPES : RESPONSE_TYPES;
        const content = (name: string): Json => Object.fromEntries(types.map((t) => [t, { schema: { $ref: refPath(name, 3) } }]));
        const responses: Json = { '200': { description: 'OK', content: content(op.response) }, '401': { description: 'Unauthorized' } };
        if (op.created) responses['201'] = { description: 'Created', content: content(op.response) };
        if (op.method === 'delete' && op.action === 'delete') responses['202'] = { description: 'Accepted', content: content(op.response) };
        const o: Json = {
          tags: [tag],
          description: op.description,
          operationId: op.operationId,
          parameters: op.params.map(v3Param),
          responses,
          'x-kubernetes-action': op.action,
          'x-orch-action': op.action,
          ...opGvk(gvk),
        };
        if (op.body) {
          const bodyTypes = op.bodyIsPatch ? patchTypes(def) : ['*/*'];
          o.requestBody = {
            content: Object.fromEntries(bodyTypes.map((t) => [t, { schema: { $ref: refPath(op.body!, 3) } }])),
            required: !op.body.endsWith('DeleteOptions'),
          };
        }
        if (op.deprecated) o.deprecated = true;
        item[op.method] = o;
      }
      paths[ps.path] = item;
    }
  }
  return paths;
}

/** kind and list schemas of the definitions, plus the transitive closure of shared refs */
function buildSchemas(kinds: ResourceDefinition[], src: OpenAPISource, v: Version): Json {
  const n = new SchemaNames(src.apiDomain);
  const out: Json = {};
  const pending = new Set<string>([n.meta('Status'), n.meta('DeleteOptions'), n.meta('WatchEvent'), n.meta('Patch'), n.meta('ListMeta')]);
  for (const def of kinds) {
    const name = definitionName(src.apiDomain, def.group, def.version, def.kind);
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    out[name] = { ...toOpenAPISchema(def.schema, v, pending), ...gvkExtension(gvk) };
    out[`${name}List`] = {
      description: `${def.kind}List is a list of ${def.kind} objects.`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: { type: 'string', description: 'Versioned schema of this representation.' },
        items: { type: 'array', description: `List of ${def.resource}.`, items: { $ref: refPath(name, v) } },
        kind: { type: 'string', description: 'Kind of this list.' },
        metadata: v === 2 ? { $ref: refPath(n.meta('ListMeta'), v), description: 'Standard list metadata.' } : { allOf: [{ $ref: refPath(n.meta('ListMeta'), v) }], description: 'Standard list metadata.' },
      },
      ...gvkExtension({ ...gvk, kind: `${def.kind}List` }),
    };
  }
  const done = new Set<string>();
  // a Set's iterator also visits names added during the loop: the refs toOpenAPISchema finds below
  for (const name of pending) {
    pending.delete(name);
    if (done.has(name) || out[name] !== undefined) continue;
    done.add(name);
    const s = src.defs[name];
    if (!s) continue;
    out[name] = toOpenAPISchema(s, v, pending);
  }
  return sortObject(out);
}

function sortObject(o: Json): Json {
  const out: Json = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

function served(doc: Json): ServedDocument {
  const json = JSON.stringify(doc);
  return { json, doc, hash: createHash('sha512').update(json).digest('hex').toUpperCase() };
}

const SECURITY_V2 = { securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer token authentication' } }, security: [{ BearerToken: [] }] };

export function buildOpenAPIV2(src: OpenAPISource, info: OpenAPIInfo = {}): Json {
  const n = new SchemaNames(src.apiDomain);
  const kinds = src.all();
  return {
    swagger: '2.0',
    info: { title: info.title ?? 'Orch', version: info.version ?? 'v1.32.0' },
    paths: sortObject(buildPathsV2(kinds, n)),
    definitions: buildSchemas(kinds, src, 2),
    ...SECURITY_V2,
  };
}

/** `api/v1` or `apis/<group>/<version>` → its definitions */
export function groupVersionPaths(src: OpenAPISource): Map<string, ResourceDefinition[]> {
  const out = new Map<string, ResourceDefinition[]>();
  for (const def of src.all()) {
    const key = def.group === '' ? `api/${def.version}` : `apis/${def.group}/${def.version}`;
    const list = out.get(key) ?? [];
    list.push(def);
    out.set(key, list);
  }
  return out;
}

export function buildOpenAPIV3GroupVersion(src: OpenAPISource, defs: ResourceDefinition[], info: OpenAPIInfo = {}): Json {
  const n = new SchemaNames(src.apiDomain);
  return {
    openapi: '3.0.0',
    info: { title: info.title ?? 'Orch', version: info.version ?? 'v1.32.0' },
    paths: sortObject(buildPathsV3(defs, n)),
    components: {
      schemas: buildSchemas(defs, src, 3),
      securitySchemes: { BearerToken: { type: 'apiKey', description: 'Bearer token authentication', name: 'authorization', in: 'header' } },
    },
    security: [{ BearerToken: [] }],
  };
}

/**
 * The served documents, rebuilt lazily when the source's version changes.
 * v3 group-version documents are built on first request of each.
 */
export class OpenAPIDocuments {
  private builtFor = -1;
  private v2Doc: ServedDocument | undefined;
  private v3Docs = new Map<string, ServedDocument>();
  private gvs = new Map<string, ResourceDefinition[]>();
  private index: ServedDocument | undefined;

  constructor(
    private readonly src: OpenAPISource,
    private readonly info: OpenAPIInfo = {},
  ) {}

  private fresh(): void {
    if (this.builtFor === this.src.version) return;
    this.builtFor = this.src.version;
    this.v2Doc = undefined;
    this.index = undefined;
    this.v3Docs.clear();
    this.gvs = groupVersionPaths(this.src);
  }

  v2(): ServedDocument {
    this.fresh();
    this.v2Doc ??= served(buildOpenAPIV2(this.src, this.info));
    return this.v2Doc;
  }

  /** path is `api/v1` or `apis/<group>/<version>` (no leading slash) */
  v3(path: string): ServedDocument | undefined {
    this.fresh();
    const hit = this.v3Docs.get(path);
    if (hit) return hit;
    const defs = this.gvs.get(path);
    if (!defs) return undefined;
    const doc = served(buildOpenAPIV3GroupVersion(this.src, defs, this.info));
    this.v3Docs.set(path, doc);
    return doc;
  }

  v3Index(): ServedDocument {
    this.fresh();
    if (this.index) return this.index;
    const paths: Json = {};
    for (const key of [...this.gvs.keys()].sort()) {
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${this.v3(key)!.hash}` };
    }
    this.index = served({ paths });
    return this.index;
  }
}
