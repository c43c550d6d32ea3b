// The registry and one generic store per served kind: the definitions served
// (--runtime-config), and the hooks every write runs (namespace lifecycle,
// managedFields, admission plugins, webhooks and policies, RBAC escalation
// prevention, Service allocations, CRD creation guards), chosen per kind.

import { StatusError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import type { UserInfo } from '../auth/types.js';
import type { EscalationGuard, RbacResource } from '../auth/authz/rbac/escalation.js';
import { checkCertificateSigning } from '../auth/authz/signer-names.js';
import type { Authorizer } from '../auth/authz/types.js';
import { withBuiltinHandlers } from '../endpoints/handlers/builtin-kinds.js';
import { SchemaNames } from '../machinery/schema/naming.js';
import { SchemaAdmission } from '../registry/admission.js';
import { admissionRegistrationDefinitions } from '../registry/admission/kinds.js';
import type { ServiceResolver } from '../registry/admission/webhook-client.js';
import type { AdmissionChain } from '../registry/admission/chain.js';
import { parseIpv4Cidr } from '../registry/allocators/cidr.js';
import { ServiceAllocator } from '../registry/allocators/service-allocator.js';
import { cleanupFinalizer } from '../registry/crd/kind.js';
import { GenericStore, type WriteHooks, decodeObject } from '../registry/generic-store.js';
import { builtinDefinitions, sharedDefinitions } from '../registry/kinds/index.js';
import { managedFieldsHooks } from '../registry/managed-fields.js';
import { NamespaceLifecycle } from '../registry/namespace-lifecycle.js';
import { Registry } from '../registry/registry.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';
import type { RevisionedStore } from '../store/types.js';
import { allocationOwner } from '../controllers/service-allocation-repair.js';
import { type AdmissionPluginOptions, admissionHooks } from './admission-plugins.js';
import { buildAdmissionChain } from './admission-setup.js';
import { quotaAccess } from './quota-setup.js';
import { clusterObjects, namespaceObjects } from './admission-access.js';
import { type CrdSetup, startCrds } from './crd-setup.js';
import { applyRuntimeConfig, parseRuntimeConfig } from './runtime-config.js';
import { DEFAULT_NODE_PORT_RANGE, DEFAULT_SERVICE_CIDR, parsePortRange } from './server-options.js';
import { builtinNamespacesOf, immortalNamespacesOf } from '../core/product-names.js';

export interface StoresOptions {
  apiDomain: string;
  runtimeConfig?: string;
  admissionPlugins?: AdmissionPluginOptions;
  admissionServiceResolver?: ServiceResolver;
  serviceClusterIpRange?: string;
  serviceNodePortRange?: string;
}

export interface Stores {
  registry: Registry;
  /** the Namespace definition (bootstrap, controllers) */
  nsDef: ResourceDefinition;
  rbacGroup: string;
  admissionChain: AdmissionChain | undefined;
  serviceAllocator: ServiceAllocator;
  crds: CrdSetup;
  /** the one generic store of a definition, with the hooks of its kind */
  storeFor: (def: ResourceDefinition) => GenericStore;
  /** the RBAC stores' escalation check, once the authorizer exists */
  setEscalation(guard: EscalationGuard): void;
  /** the authorizer the CertificateSigning check asks, once it exists */
  setAuthorizer(authorizer: Authorizer): void;
}

export function buildStores(opts: StoresOptions, store: RevisionedStore, log: (msg: string) => void, clock: Clock, random: Random): Stores {
  const defs = sharedDefinitions(opts.apiDomain);
  const served = applyRuntimeConfig(
    [...withBuiltinHandlers(builtinDefinitions(opts.apiDomain)), ...admissionRegistrationDefinitions(new SchemaNames(opts.apiDomain))],
    parseRuntimeConfig(opts.runtimeConfig ?? ''),
  );
  const registry = new Registry(opts.apiDomain, defs, served);
  const admission = new SchemaAdmission(defs, [cleanupFinalizer(opts.apiDomain)]);
  const nsDef = registry.lookup('', 'v1', 'namespaces')!;
  const rbacGroup = `rbac.authorization.${opts.apiDomain}`;
  let escalation: EscalationGuard | undefined;
  // namespace lifecycle and managedFields run in the registry's write path (src/registry/)
  const namespaces = new NamespaceLifecycle(store, nsDef, immortalNamespacesOf(opts.apiDomain));
  const namespaceState = namespaces.state;
  const hooks: WriteHooks = { ...managedFieldsHooks(defs, clock), ...namespaces.hooks() };
  // webhooks and ValidatingAdmissionPolicies (src/registry/admission/, docs/admission.md); every member
  // follows the configuration objects through its applied feed
  const admissionChain = buildAdmissionChain(registry, store, opts.apiDomain, log, opts.admissionServiceResolver, clock);
  // plugins read the member's own state (the ServiceAccount plugin: accounts and namespaces), as kube's read informers
  const lookup = (resource: 'serviceaccounts' | 'namespaces', namespace: string, name: string): ApiObject | undefined => {
    const def = registry.lookup('', 'v1', resource);
    const kv = def ? storeFor(def).readRaw(namespace, name) : undefined;
    return kv ? decodeObject(kv) : undefined;
  };
  const catchUp = async (): Promise<void> => {
    const def = registry.lookup('', 'v1', 'serviceaccounts');
    if (def) await storeFor(def).catchUp();
  };
  const storeOf = (group: string, resource: string) => (): GenericStore | undefined => {
    const def = registry.lookup(group, 'v1', resource);
    return def ? storeFor(def) : undefined;
  };
  const quotas = quotaAccess(storeOf('', 'resourcequotas'), store);
  const limitRanges = { list: namespaceObjects(storeOf('', 'limitranges'), store) };
  // the Priority plugin reads every PriorityClass of the member's state (decoded again only when they change)
  const priorityClasses = clusterObjects(storeOf(`scheduling.${opts.apiDomain}`, 'priorityclasses'), store);
  const storageClasses = clusterObjects(storeOf(`storage.${opts.apiDomain}`, 'storageclasses'), store);
  const ingressClasses = clusterObjects(storeOf(`networking.${opts.apiDomain}`, 'ingressclasses'), store);
  const runtimeClasses = clusterObjects(storeOf(`node.${opts.apiDomain}`, 'runtimeclasses'), store);
  const podSecurity = { namespace: (name: string) => lookup('namespaces', '', name), pods: namespaceObjects(storeOf('', 'pods'), store) };
  const deps = { lookup, random, catchUp, quotas, limitRanges, priorityClasses, storageClasses, ingressClasses, runtimeClasses, podSecurity, clock };
  Object.assign(hooks, admissionHooks(hooks, opts.admissionPlugins ?? {}, opts.apiDomain, deps, admissionChain?.hooks()));
  // RBAC escalation prevention (spec 001 §5.14) needs the requesting user and the authorizer;
  // only the RBAC kinds' stores get the hook, so other writes do not pay for it
  const rbacHooks = {
    ...hooks,
    async authorizeWrite(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, o: { user?: UserInfo }) {
      await escalation?.check(def.resource as RbacResource, obj, old, o.user);
    },
  };
  // kube's CertificateSigning admission plugin: a certificate written through /status needs `sign` on the signer
  let authorizer: Authorizer | undefined;
  const csrHooks = {
    ...hooks,
    async authorizeWrite(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, o: { user?: UserInfo; subresource?: string }) {
      const status = (x: ApiObject | undefined) => (x?.status ?? {}) as { certificate?: unknown };
      await checkCertificateSigning(authorizer, { resource: def.resource, group: def.group, name: obj.metadata?.name ?? '', user: o.user, subresource: o.subresource },
        status(obj).certificate, old && { certificate: status(old).certificate, signerName: String((old.spec as { signerName?: unknown } | undefined)?.signerName ?? '') });
    },
  };
  const csrGroup = `certificates.${opts.apiDomain}`;
  // Service cluster IPs and node ports, claimed with the Service's own write (src/registry/allocators/)
  const serviceAllocator = new ServiceAllocator({
    range: parseIpv4Cidr(opts.serviceClusterIpRange ?? DEFAULT_SERVICE_CIDR),
    nodePorts: parsePortRange(opts.serviceNodePortRange ?? DEFAULT_NODE_PORT_RANGE),
    ownerOf: (key) => {
      const kv = store.range({ key }).kvs[0];
      return kv ? (allocationOwner(kv) ?? { namespace: '', name: '', uid: '?' }) : undefined;
    },
    random,
  });
  const serviceHooks = { ...hooks, reserve: (_def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined) => serviceAllocator.reserve(obj, old) };
  // CustomResourceDefinitions (docs/crds.md): served on every member from the applied feed
  const crds = startCrds({ store, registry, apiDomain: opts.apiDomain, log, clock, resolver: opts.admissionServiceResolver });
  const customHooks = { ...hooks, guardCreate: (def: ResourceDefinition) => crds.registrar.guardCreate(def) };
  const stores = new Map<ResourceDefinition, GenericStore>();
  const storeFor = (def: ResourceDefinition): GenericStore => {
    let gs = stores.get(def);
    if (!gs) {
      const defHooks = def.customResource ? customHooks : def.group === rbacGroup ? rbacHooks : def.group === '' && def.resource === 'services' ? serviceHooks
        : def.group === csrGroup && def.resource === 'certificatesigningrequests' ? csrHooks : hooks;
      gs = new GenericStore(def, store, admission, defHooks, namespaceState, clock);
      stores.set(def, gs);
    }
    return gs;
  };
  return {
    registry,
    nsDef,
    rbacGroup,
    admissionChain,
    serviceAllocator,
    crds,
    storeFor,
    setEscalation(guard) {
      escalation = guard;
    },
    setAuthorizer(a) {
      authorizer = a;
    },
  };
}

/** the namespaces that exist from the start (core/product-names.ts), created unless present */
export async function bootstrapNamespaces(gs: GenericStore, apiDomain: string): Promise<void> {
  for (const name of builtinNamespacesOf(apiDomain)) {
    if (gs.readRaw('', name)) continue;
    try {
      await gs.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    }
  }
}
