// The admission chain (kube's admission plugin chain for webhooks and
// policies): mutating plugins, in order, then validating plugins, on create,
// update, delete (store writes, through the generic store's `mutate` and
// `validateAdmission` hooks) and connect (pods/exec and friends). Requests
// from clients pass through it; the server's own controllers' writes do not
// (docs/admission.md: a webhook cannot stall namespace cleanup or the
// garbage collector).

import { type Clock, systemClock } from '../../core/clock.js';
import type { UserInfo } from '../../auth/types.js';
import type { AdmissionCall, WriteHooks } from '../generic-store.js';
import { newUid } from '../../machinery/meta.js';
import type { Registry } from '../registry.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import type { RevisionedStore } from '../../store/types.js';
import { storeLookups, storeServiceResolver } from './lookups.js';
import { ValidatingAdmissionPolicies } from './policy.js';
import { AdmissionConfigSource } from './source.js';
import type { AdmissionRequest, MutatingPlugin, SubresourceCreateAdmission, ValidatingPlugin } from './types.js';
import { type ServiceResolver, WebhookAgents } from './webhook-client.js';
import type { CompiledWebhook } from './webhook-config.js';
import { MutatingWebhooks, ValidatingWebhooks } from './webhooks.js';

export interface AdmissionChainOptions {
  apiDomain: string;
  store: RevisionedStore;
  registry: Registry;
  log?: (msg: string) => void;
  /** replaces the Service/Endpoints resolver (tests) */
  resolver?: ServiceResolver;
  /** webhook call deadlines (the composition root's clock, src/core/clock.ts); absent = the system clock */
  clock?: Clock;
}

export class AdmissionChain {
  readonly source: AdmissionConfigSource;
  readonly mutating: MutatingPlugin[];
  readonly validating: ValidatingPlugin[];
  private readonly agents = new WebhookAgents();
  private readonly uids = new WeakMap<object, string>();
  private versionsCache = { at: -1, map: new Map<string, string[]>() };
  /** set by the composition root once metrics exist */
  observer?: (webhook: CompiledWebhook, outcome: 'allowed' | 'denied' | 'error' | 'skipped-error', seconds: number) => void;

  constructor(private readonly o: AdmissionChainOptions) {
    const group = `admissionregistration.${o.apiDomain}`;
    const def = (resource: string): ResourceDefinition => {
      const d = o.registry.lookup(group, 'v1', resource);
      if (!d) throw new Error(`admission: ${resource}.${group}/v1 is not registered`);
      return d;
    };
    this.source = new AdmissionConfigSource(
      o.store,
      {
        mutating: def('mutatingwebhookconfigurations'),
        validating: def('validatingwebhookconfigurations'),
        policies: def('validatingadmissionpolicies'),
        bindings: def('validatingadmissionpolicybindings'),
      },
      o.log,
    );
    const lookups = storeLookups(o.store, o.registry);
    const resolver = o.resolver ?? storeServiceResolver(o.store, o.registry);
    const versionsOf = (g: string, r: string) => this.versionsOf(g, r);
    const webhookEnv = {
      apiDomain: o.apiDomain,
      lookups,
      resolver,
      versionsOf,
      agents: this.agents,
      clock: o.clock ?? systemClock,
      observe: (w: CompiledWebhook, outcome: 'allowed' | 'denied' | 'error' | 'skipped-error', seconds: number) => this.observer?.(w, outcome, seconds),
    };
    this.mutating = [new MutatingWebhooks({ ...webhookEnv, webhooks: () => this.source.mutatingWebhooks() })];
    this.validating = [
      new ValidatingAdmissionPolicies({ apiDomain: o.apiDomain, lookups, versionsOf, policies: () => this.source.policies() }),
      new ValidatingWebhooks({ ...webhookEnv, webhooks: () => this.source.validatingWebhooks() }),
    ];
  }

  start(): void {
    this.source.start();
  }

  stop(): void {
    this.source.stop();
    this.agents.close();
  }

  /** the generic store hooks; writes without a requesting user (the server's own) are not admitted */
  hooks(): Required<Pick<WriteHooks, 'mutate' | 'validateAdmission' | 'mutatesCopy'>> {
    return {
      mutatesCopy: true,
      mutate: async (call) => {
        // nothing configured: no request object, no plugin calls (the common case costs one check)
        if (!call.opts.user || this.source.mutatingWebhooks().length === 0) return call.object;
        const req = this.request(call);
        for (const p of this.mutating) req.object = await p.admit(req);
        return req.object;
      },
      validateAdmission: async (call) => {
        if (!call.opts.user || (this.source.validatingWebhooks().length === 0 && this.source.policies().length === 0)) return;
        const req = this.request(call);
        for (const p of this.validating) await p.validate(req);
      },
    };
  }

  /**
   * CONNECT (pods/exec, attach, portforward, proxy): the options object is
   * what webhooks and policies see as `object`. Returns the warnings.
   */
  async admitConnect(a: { def: ResourceDefinition; subresource: string; namespace: string; name: string; options: ApiObject; user: UserInfo }): Promise<string[]> {
    const req: AdmissionRequest = {
      uid: newUid(),
      operation: 'CONNECT',
      def: a.def,
      subresource: a.subresource,
      namespace: a.namespace,
      name: a.name,
      object: a.options,
      oldObject: undefined,
      options: undefined,
      dryRun: false,
      user: a.user,
      warnings: [],
      auditAnnotations: {},
    };
    for (const p of this.mutating) req.object = (await p.admit(req)) ?? req.object;
    for (const p of this.validating) await p.validate(req);
    return req.warnings;
  }

  /**
   * CREATE of a sub-resource whose body is its own kind (pods/eviction's
   * Eviction, kube's createValidation of the sub-resource's REST): mutating
   * then validating webhooks and policies. Returns the admitted object.
   */
  async admitSubresourceCreate(a: SubresourceCreateAdmission): Promise<ApiObject> {
    if (this.source.mutatingWebhooks().length === 0 && this.source.validatingWebhooks().length === 0 && this.source.policies().length === 0) return a.object;
    const req: AdmissionRequest = {
      uid: newUid(),
      operation: 'CREATE',
      def: a.def,
      subresource: a.subresource,
      kind: a.kind,
      namespace: a.namespace,
      name: a.name,
      object: a.object,
      oldObject: undefined,
      options: undefined,
      dryRun: a.dryRun,
      user: a.user,
      warnings: a.warnings,
      auditAnnotations: {},
    };
    for (const p of this.mutating) req.object = (await p.admit(req)) ?? req.object;
    for (const p of this.validating) await p.validate(req);
    return req.object ?? a.object;
  }

  private request(call: AdmissionCall): AdmissionRequest {
    // one uid per API request, across the mutating and the validating phase
    let uid = this.uids.get(call.opts);
    if (!uid) {
      uid = newUid();
      this.uids.set(call.opts, uid);
    }
    return {
      uid,
      operation: call.operation,
      def: call.def,
      subresource: call.opts.subresource ?? '',
      namespace: call.def.scope === 'Namespaced' ? call.namespace : '',
      name: call.name,
      object: call.object,
      oldObject: call.oldObject,
      options: call.opts.admissionOptions,
      dryRun: call.opts.dryRun,
      user: call.opts.user!,
      warnings: (call.opts.warnings ??= []),
      auditAnnotations: (call.opts.auditAnnotations ??= {}),
    };
  }

  /** served versions of a group/resource (matchPolicy Equivalent), cached per registry generation */
  private versionsOf(group: string, resource: string): string[] {
    if (this.versionsCache.at !== this.o.registry.version) {
      const map = new Map<string, string[]>();
      for (const d of this.o.registry.all()) {
        const k = `${d.group}/${d.resource}`;
        map.set(k, [...(map.get(k) ?? []), d.version]);
      }
      this.versionsCache = { at: this.o.registry.version, map };
    }
    return this.versionsCache.map.get(`${group}/${resource}`) ?? [];
  }
}
