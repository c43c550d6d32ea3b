// The served OpenAPI documents, built from the registered definitions:
//   /openapi/v2                  one Swagger 2.0 document
//   /openapi/v3                  the index of group-version documents
//   /openapi/v3/api/v1, /openapi/v3/apis/<g>/<v>   OpenAPI 3.0 documents
// Names follow naming.ts. Every `x-orch-*` marker is emitted together with its
// `x-kubernetes-*` twin because kubectl reads only the latter (patch merge
// keys, list types, group-version-kind, int-or-string, preserve-unknown);
// docs/schemas.md records that decision. Documents are built once per
// registry version and served with their SHA-512 hash.
//
// The parts: schemas in a document (openapi-schema.ts), Kubernetes' named
// definitions for structures the kinds write inline (openapi-hoist.ts,
// openapi-type-names.ts, openapi-jsonschemaprops.ts), the operations of a
// definition (openapi-operations.ts) and their path items (openapi-paths.ts).

import { createHash } from 'node:crypto';
import { type ResourceDefinition, listKindOf } from './types.js';
import { SchemaNames } from '../machinery/schema/naming.js';
import type { Definitions } from '../machinery/schema/types.js';
import { type Json, type Version, dropOrchExtensions, gvkExtension, kindDefinitionName, listDefinitionName, refPath, selectableFieldsExtension, toOpenAPISchema } from './openapi-schema.js';
import { buildPathsV2, buildPathsV3 } from './openapi-paths.js';
import { hoistNamedTypes } from './openapi-hoist.js';
import { publishKubeRequired } from './openapi-kube-required.js';
import { crdSchemaForV2 } from './openapi-crd-v2.js';

export { toOpenAPISchema } from './openapi-schema.js';

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

/** kind and list schemas of the definitions, plus the transitive closure of shared refs */
function buildSchemas(kinds: ResourceDefinition[], src: OpenAPISource, v: Version): Json {
  const n = new SchemaNames(src.apiDomain);
  const out: Json = {};
  const pending = new Set<string>([n.meta('Status'), n.meta('DeleteOptions'), n.meta('WatchEvent'), n.meta('Patch'), n.meta('ListMeta')]);
  for (const def of kinds) {
    const name = kindDefinitionName(src.apiDomain, def);
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    const schema = def.customResource && v === 2 ? crdSchemaForV2(def.schema) : def.schema;
    out[name] = { ...toOpenAPISchema(schema, v, pending), ...gvkExtension(gvk), ...selectableFieldsExtension(def) };
    // like Kubernetes, a List definition only for kinds that can be listed (not TokenReview and friends)
    if (def.verbs && !def.verbs.includes('list')) continue;
    const listKind = listKindOf(def);
    out[listDefinitionName(src.apiDomain, def)] = {
      description: `${listKind} is a list of ${def.kind} objects.`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: { type: 'string', description: 'Versioned schema of this representation.' },
        items: { type: 'array', description: `List of ${def.resource}.`, items: { $ref: refPath(name, v) } },
        kind: { type: 'string', description: 'Kind of this list.' },
        metadata: v === 2 ? { $ref: refPath(n.meta('ListMeta'), v), description: 'Standard list metadata.' } : { allOf: [{ $ref: refPath(n.meta('ListMeta'), v) }], description: 'Standard list metadata.' },
      },
      ...gvkExtension({ ...gvk, kind: listKind }),
    };
  }
  const done = new Set<string>();
  const close = (): void => {
    // a Set's iterator also visits names added during the loop: the refs toOpenAPISchema finds below
    for (const name of pending) {
      pending.delete(name);
      if (done.has(name) || out[name] !== undefined) continue;
      done.add(name);
      const s = src.defs[name];
      if (!s) continue;
      out[name] = toOpenAPISchema(s, v, pending);
    }
  };
  close();
  // inline structures of built-in kinds become Kubernetes' named definitions (openapi-hoist.ts);
  // definitions that adds may reference others, whose own structures are hoisted in turn
  const custom = new Set(kinds.filter((d) => d.customResource).map((d) => kindDefinitionName(src.apiDomain, d)));
  const ctx = {
    v,
    rev: n.rev,
    apiDomain: src.apiDomain,
    shared: (name: string) => (src.defs[name] ? toOpenAPISchema(src.defs[name], v, pending) : undefined),
  };
  let roots = Object.keys(out).filter((k) => !custom.has(k));
  while (roots.length > 0) {
    const before = new Set(Object.keys(out));
    hoistNamedTypes(out, roots, ctx);
    close();
    roots = Object.keys(out).filter((k) => !before.has(k));
  }
  tagSharedKinds(out, n, src.all());
  publishKubeRequired(out, n.rev);
  return sortObject(out);
}

/**
 * Kubernetes tags the meta/v1 kinds every group version serves with their group-version-kinds too:
 * Status as core v1 (the only version it is encoded in), DeleteOptions and WatchEvent once per served
 * group version (clients decoding a generic body look them up by GVK).
 */
function tagSharedKinds(out: Json, n: SchemaNames, all: ResourceDefinition[]): void {
  const status = out[n.meta('Status')] as Json | undefined;
  if (status) Object.assign(status, gvkExtension({ group: '', version: 'v1', kind: 'Status' }));
  const gvs = [...new Set(all.filter((d) => !d.customResource).map((d) => `${d.group}/${d.version}`))].sort().map((gv) => gv.split('/') as [string, string]);
  for (const kind of ['DeleteOptions', 'WatchEvent']) {
    const def = out[n.meta(kind)] as Json | undefined;
    if (!def) continue;
    const list = gvs.map(([group, version]) => ({ group, kind, version }));
    Object.assign(def, { 'x-kubernetes-group-version-kind': list, 'x-orch-group-version-kind': list });
  }
}

function sortObject(o: Json): Json {
  const out: Json = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

/** kube-openapi's hash of a served document: upper-case hex SHA-512 of its JSON (the `?hash=` of /openapi/v3) */
export function openapiHash(json: string): string {
  return createHash('sha512').update(json).digest('hex').toUpperCase();
}

function served(doc: Json): ServedDocument {
  const json = JSON.stringify(doc);
  return { json, doc, hash: openapiHash(json) };
}

const SECURITY_V2 = { securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer token authentication' } }, security: [{ BearerToken: [] }] };

/** kube's own API domain: the documents carry kube's extension names only (dropOrchExtensions) */
function kubeNamesOnly(src: OpenAPISource, doc: Json): Json {
  if (src.apiDomain === 'k8s.io') dropOrchExtensions(doc);
  return doc;
}

export function buildOpenAPIV2(src: OpenAPISource, info: OpenAPIInfo = {}): Json {
  const n = new SchemaNames(src.apiDomain);
  const kinds = src.all();
  return kubeNamesOnly(src, {
    swagger: '2.0',
    info: { title: info.title ?? 'Orch', version: info.version ?? 'v1.32.0' },
    paths: sortObject(buildPathsV2(kinds, n)),
    definitions: buildSchemas(kinds, src, 2),
    ...SECURITY_V2,
  });
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
  return kubeNamesOnly(src, {
    openapi: '3.0.0',
    info: { title: info.title ?? 'Orch', version: info.version ?? 'v1.32.0' },
    paths: sortObject(buildPathsV3(defs, n)),
    components: {
      schemas: buildSchemas(defs, src, 3),
      securitySchemes: { BearerToken: { type: 'apiKey', description: 'Bearer token authentication', name: 'authorization', in: 'header' } },
    },
    security: [{ BearerToken: [] }],
  });
}

const sameDefs = (a: readonly ResourceDefinition[], b: readonly ResourceDefinition[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

/** the source with only some of its definitions */
const only = (src: OpenAPISource, defs: ResourceDefinition[]): OpenAPISource => ({ apiDomain: src.apiDomain, defs: src.defs, version: src.version, all: () => defs });

/**
 * The served documents, rebuilt lazily when the source's version changes — but only what changed: a CRD
 * write changes the registry version, and rebuilding every document for it cost hundreds of
 * milliseconds per CRD. The built-in kinds' part of /openapi/v2 is kept while the built-in definitions
 * are the same objects, and a group-version's v3 document while its definitions are (the CRD registrar
 * keeps an unchanged CRD's definitions). The custom resources' part of v2 is rebuilt and merged: custom
 * kinds are never hoisted and shared kinds are tagged from the built-in group versions only, so the
 * merge is what buildOpenAPIV2 of everything gives (test/unit/openapi.test.ts checks).
 */
export class OpenAPIDocuments {
  private builtFor = -1;
  private v2Doc: ServedDocument | undefined;
  private builtins: ResourceDefinition[] = [];
  private v2Builtins: Json | undefined;
  private v3Docs = new Map<string, { defs: ResourceDefinition[]; doc: ServedDocument }>();
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
    this.gvs = groupVersionPaths(this.src);
    const builtins = this.src.all().filter((d) => !d.customResource);
    if (!sameDefs(builtins, this.builtins)) {
      // every document lists the built-in group versions (tagSharedKinds)
      this.builtins = builtins;
      this.v2Builtins = undefined;
      this.v3Docs.clear();
    }
    for (const [path, e] of this.v3Docs) if (!sameDefs(this.gvs.get(path) ?? [], e.defs)) this.v3Docs.delete(path);
  }

  v2(): ServedDocument {
    this.fresh();
    if (this.v2Doc) return this.v2Doc;
    const base = (this.v2Builtins ??= buildOpenAPIV2(only(this.src, this.builtins), this.info));
    const custom = this.src.all().filter((d) => d.customResource);
    if (custom.length === 0) return (this.v2Doc = served(base));
    const extra = buildOpenAPIV2(only(this.src, custom), this.info);
    // the built-in part's shared definitions win: they carry the built-in group versions' tags
    const definitions = sortObject({ ...(extra.definitions as Json), ...(base.definitions as Json) });
    const paths = sortObject({ ...(extra.paths as Json), ...(base.paths as Json) });
    return (this.v2Doc = served({ ...base, paths, definitions }));
  }

  /** path is `api/v1` or `apis/<group>/<version>` (no leading slash) */
  v3(path: string): ServedDocument | undefined {
    this.fresh();
    const hit = this.v3Docs.get(path);
    if (hit) return hit.doc;
    const defs = this.gvs.get(path);
    if (!defs) return undefined;
    const doc = served(buildOpenAPIV3GroupVersion(this.src, defs, this.info));
    this.v3Docs.set(path, { defs, doc });
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
