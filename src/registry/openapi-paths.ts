// The `paths` of the served documents: each definition's operations
// (openapi-operations.ts) written as Swagger 2.0 or OpenAPI 3.0 path items.

import type { ResourceDefinition } from './types.js';
import type { SchemaNames } from '../machinery/schema/naming.js';
import { type GVK, type Json, refPath } from './openapi-schema.js';
import { type Param, groupTag, patchTypes, resourcePaths } from './openapi-operations.js';
import { STRATEGIC_MERGE_PATCH } from '../machinery/patch/media-types.js';
import { protobufMediaType } from '../machinery/protobuf/envelope.js';

function opGvk(gvk: GVK): Json {
  const one = { group: gvk.group, kind: gvk.kind, version: gvk.version };
  return { 'x-kubernetes-group-version-kind': one, 'x-orch-group-version-kind': one };
}

/**
 * What an operation answers in. The server takes both protobuf names (src/machinery/protobuf/envelope.ts);
 * the documents list the spec's, or kube's with `--api-domain k8s.io`, as kube-apiserver lists it.
 */
function responseTypes(op: { action: string }, apiDomain: string): string[] {
  const protobuf = protobufMediaType(apiDomain);
  const plain = ['application/json', 'application/yaml', protobuf];
  return op.action.startsWith('watch') || op.action === 'list' ? [...plain, 'application/json;stream=watch', `${protobuf};stream=watch`] : plain;
}

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

export function buildPathsV2(defs: ResourceDefinition[], n: SchemaNames): Json {
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
          produces: responseTypes(op, n.apiDomain),
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

/**
 * The patch types the v3 document lists for a kind. kubectl 1.32 computes a client-side apply's
 * strategic merge patch from the v3 document when it lists strategic merge, and its v3 lookup
 * cannot descend into a map of structures (strategicpatch PatchMetaFromOpenAPIV3 knows only
 * `properties`): a changed CRD schema (JSONSchemaProps' `properties` map) would print `warning: error
 * calculating patch from openapi v3 spec: unable to find api field "spec"` before it falls back to
 * the v2 document, which handles maps. Not listing it for the CRD kind sends kubectl to v2 at once;
 * the server accepts the strategic merge patch all the same (docs/compatibility.md).
 */
function v3PatchTypes(def: ResourceDefinition, n: SchemaNames): string[] {
  const types = patchTypes(def);
  const crd = def.kind === 'CustomResourceDefinition' && def.group === `apiextensions.${n.apiDomain}`;
  return crd ? types.filter((t) => t !== STRATEGIC_MERGE_PATCH) : types;
}

export function buildPathsV3(defs: ResourceDefinition[], n: SchemaNames): Json {
  const paths: Json = {};
  for (const def of defs) {
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    const tag = groupTag(def.group, def.version, n.apiDomain);
    for (const ps of resourcePaths(def, n)) {
      const item: Json = { parameters: ps.pathParams.map(v3Param) };
      for (const op of ps.ops) {
        const types = responseTypes(op, n.apiDomain);
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
          const bodyTypes = op.bodyIsPatch ? v3PatchTypes(def, n) : ['*/*'];
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
