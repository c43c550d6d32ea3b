// The installer (kube's APIInstaller): maps (definition, verb, sub-resource)
// to the handler that serves it, once per change of the registry (CRDs add
// and remove definitions at run time), so that dispatching a request is one
// map lookup. The rules a request meets (spec 000 §4.1):
//   404 — no such resource, an undeclared sub-resource, or a namespace on a
//         cluster-scoped kind;
//   405 — a verb the definition does not serve, POST naming an object, PUT or
//         PATCH naming a collection, or a sub-resource with no handler for the verb.
// Virtual kinds and special sub-resources are served by their capabilities
// (`ResourceDefinition.capabilities`, src/registry/capabilities.ts) through
// handlers/capability.ts, which decodes the body for them.

import { methodNotAllowed, notFoundPath } from '../core/errors.js';
import { capabilityHandler } from './handlers/capability.js';
import type { HandlerContext } from './handlers/context.js';
import { handleCreate } from './handlers/create.js';
import { handleDelete } from './handlers/delete.js';
import { handleDeleteCollection } from './handlers/deletecollection.js';
import { handleGet } from './handlers/get.js';
import { handleList } from './handlers/list.js';
import { NODE_STREAM_SUBRESOURCES, handleNodeStream } from './handlers/node-streams.js';
import { handlePatch } from './handlers/patch.js';
import { handleUpdate } from './handlers/update.js';
import type { Registry } from '../registry/registry.js';
import { scaleCapabilities } from '../registry/scale.js';
import type { ApiRequest, ApiResponse, RequestInfo } from './request.js';
import type { ResourceDefinition } from '../registry/types.js';

export type Handler = (ctx: HandlerContext, req: ApiRequest) => Promise<ApiResponse>;

export interface Route {
  def: ResourceDefinition;
  handler: Handler;
  /** reads (get, list) may be gzipped when large */
  compressible: boolean;
}

const DEFAULT_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface Installed {
  def: ResourceDefinition;
  subresources: Set<string>;
  /** `<subresource> <verb> <named>` → route */
  routes: Map<string, Route>;
}

export class RouteTable {
  private table = new Map<string, Installed>();
  private stale = true;
  private readonly generic: Record<string, Handler>;

  /** `watch`: the watch verb's handler (src/endpoints/handlers/watch.ts), bound to the cacher */
  constructor(
    private readonly registry: Registry,
    watch: Handler,
  ) {
    this.generic = {
      get: handleGet,
      list: handleList,
      watch,
      create: handleCreate,
      update: handleUpdate,
      patch: handlePatch,
      delete: handleDelete,
      deletecollection: handleDeleteCollection,
    };
    registry.onChange(() => {
      this.stale = true;
    });
  }

  /** the route of a resource request; a StatusError (404, 405) when there is none */
  resolve(info: RequestInfo): Route {
    if (this.stale) this.install();
    const installed = this.table.get(`${info.group}/${info.version}/${info.resource}`);
    if (!installed) throw notFoundPath();
    if (info.subresource !== '' && !installed.subresources.has(info.subresource)) throw notFoundPath();
    if (installed.def.scope === 'Cluster' && info.namespace !== '') throw notFoundPath();
    const route = installed.routes.get(routeKey(info.subresource, info.verb, info.name !== ''));
    if (!route) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
    return route;
  }

  private install(): void {
    this.stale = false;
    const table = new Map<string, Installed>();
    for (const def of this.registry.all()) {
      const routes = new Map<string, Route>();
      const subresources = ['', ...(def.subresources ?? [])];
      for (const verb of def.verbs ?? DEFAULT_VERBS) {
        for (const sub of subresources) {
          for (const named of [false, true]) {
            const h = this.handlerFor(def, verb, sub, named);
            if (h) routes.set(routeKey(sub, verb, named), { def, handler: h, compressible: verb === 'get' || verb === 'list' });
          }
        }
      }
      table.set(`${def.group}/${def.version}/${def.resource}`, { def, subresources: new Set(def.subresources ?? []), routes });
    }
    this.table = table;
  }

  /** the one place that knows which verb takes which path (spec 000 §4.1) */
  private handlerFor(def: ResourceDefinition, verb: string, sub: string, named: boolean): Handler | undefined {
    // a watch serves the collection (or one object by name) whatever the sub-resource, as before
    if (verb === 'watch') return this.generic.watch;
    // POST names a collection; PUT and PATCH name an object
    if (verb === 'create' && named && sub === '' && !def.handlers?.create && !def.capabilities?.['']?.create) return undefined;
    if ((verb === 'update' || verb === 'patch') && !named) return undefined;
    // `scale` is served for every definition that declares where its fields live
    const cap = def.capabilities?.[sub] ?? (sub === 'scale' && def.scale ? scaleCapabilities(def, def.scale) : undefined);
    const override: Handler | undefined =
      (cap ? capabilityHandler(cap, verb) : undefined) ??
      (def.handlers?.[sub ? `${sub}/${verb}` : verb] as Handler | undefined) ??
      (NODE_STREAM_SUBRESOURCES.has(sub) ? handleNodeStream : undefined);
    if (override) return override;
    // sub-resources other than status have no generic handler
    if (sub !== '' && sub !== 'status') return undefined;
    return this.generic[verb];
  }
}

function routeKey(sub: string, verb: string, named: boolean): string {
  return `${sub} ${verb} ${named ? 1 : 0}`;
}
