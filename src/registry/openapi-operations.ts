// The paths and operations a definition serves, as the served OpenAPI
// documents describe them (spec 000 §4.2 verbs and parameters), before they
// are written in either document's form (openapi-paths.ts).

import type { ResourceDefinition } from './types.js';
import type { SchemaNames } from '../machinery/schema/naming.js';
import { patchMediaTypes } from '../machinery/patch/media-types.js';
import { kindDefinitionName, listDefinitionName } from './openapi-schema.js';

/** `rbac.authorization.orch.io` → `RbacAuthorization`; core → `Core`; `stable.example.com` → `StableExampleCom` */
function groupPascal(group: string, apiDomain: string): string {
  if (group === '') return 'Core';
  const g = group.endsWith(`.${apiDomain}`) ? group.slice(0, -apiDomain.length - 1) : group;
  return g
    .split(/[.-]/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

export function groupTag(group: string, version: string, apiDomain: string): string {
  const p = groupPascal(group, apiDomain);
  return `${p.charAt(0).toLowerCase()}${p.slice(1)}_${version}`;
}

// ---- parameters (spec 000 §4.2) ----

export interface Param {
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
  // the phrases kubectl's own swagger check looks for ("list of returned", "Watch for changes to the described resources")
  fieldSelector: q('fieldSelector', 'string', 'Restrict the list of returned objects by their fields (default: every object).'),
  labelSelector: q('labelSelector', 'string', 'Restrict the list of returned objects by their labels (default: every object).'),
  limit: q('limit', 'integer', 'Maximum number of items for a list call; the response carries a continue token when more exist.'),
  resourceVersion: q('resourceVersion', 'string', 'Constraint on the resource version of the data served (spec 000 §4.6).'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion applies to list calls: Exact or NotOlderThan.'),
  sendInitialEvents: q('sendInitialEvents', 'boolean', 'Start a watch with synthetic ADDED events for existing objects (streaming list).'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Timeout for list/watch calls.'),
  watch: q('watch', 'boolean', 'Watch for changes to the described resources, streamed as add, update and remove notifications.'),
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
export function patchTypes(def: ResourceDefinition): string[] {
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

export function resourcePaths(def: ResourceDefinition, n: SchemaNames): PathSpec[] {
  const prefix = def.group === '' ? `/api/${def.version}` : `/apis/${def.group}/${def.version}`;
  const verbs = new Set(def.verbs ?? ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  const gv = `${groupPascal(def.group, n.apiDomain)}${def.version.charAt(0).toUpperCase()}${def.version.slice(1)}`;
  const K = def.kind;
  const kindName = kindDefinitionName(n.apiDomain, def);
  const listName = listDefinitionName(n.apiDomain, def);
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
