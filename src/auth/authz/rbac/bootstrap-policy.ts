// The default roles and bindings (spec 001 §5.14), after kube's bootstrap
// policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), adapted to the
// kinds this server serves and to the API domain: every group kube spells
// `*.k8s.io` is spelt `*.<domain>` here; apps, batch, autoscaling and policy
// keep their bare names. Rules for kinds this server does not serve yet are
// kept, so that the roles are right as those kinds land. The Roles and
// RoleBindings of the system and public namespaces are namespace-policy.ts's.

import type { PolicyRule } from './rules.js';
import { signerNamesOf, systemNamespacesOf } from '../../../core/product-names.js';
import { type BootstrapMeta, type Subject, bootstrapMetaOf, bootstrapNames, eventsRule, rule, subjectsOf, urls } from './policy-meta.js';
import { type DefaultRole, type DefaultRoleBinding, defaultNamespacePolicy } from './namespace-policy.js';

export { bootstrapNames } from './policy-meta.js';
export type { DefaultRole, DefaultRoleBinding } from './namespace-policy.js';

export interface DefaultClusterRole {
  apiVersion: string;
  kind: 'ClusterRole';
  metadata: BootstrapMeta;
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors: { matchLabels: Record<string, string> }[] };
}

export interface DefaultClusterRoleBinding {
  apiVersion: string;
  kind: 'ClusterRoleBinding';
  metadata: BootstrapMeta;
  roleRef: { apiGroup: string; kind: 'ClusterRole'; name: string };
  subjects: Subject[];
}

/** the cluster-wide defaults and the Roles and RoleBindings of the system and public namespaces */
export interface DefaultPolicy {
  clusterRoles: DefaultClusterRole[];
  clusterRoleBindings: DefaultClusterRoleBinding[];
  roles: DefaultRole[];
  roleBindings: DefaultRoleBinding[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = [...READ, ...WRITE];
const READ_UPDATE = [...READ, 'update'];

export function defaultPolicy(domain: string): DefaultPolicy {
  const n = bootstrapNames(domain);
  const rbac = `rbac.authorization.${domain}`;
  const g = {
    core: '',
    apps: 'apps',
    batch: 'batch',
    autoscaling: 'autoscaling',
    policy: 'policy',
    extensions: 'extensions',
    networking: `networking.${domain}`,
    discovery: `discovery.${domain}`,
    coordination: `coordination.${domain}`,
    events: `events.${domain}`,
    authn: `authentication.${domain}`,
    authz: `authorization.${domain}`,
    certificates: `certificates.${domain}`,
    node: `node.${domain}`,
    storage: `storage.${domain}`,
    metrics: `metrics.${domain}`,
    rbac,
  };
  const signers = signerNamesOf(domain);
  const meta = bootstrapMetaOf(domain);
  const role = (name: string, rules: PolicyRule[], labels?: Record<string, string>): DefaultClusterRole => ({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRole',
    metadata: meta(name, labels),
    rules,
  });
  const aggregated = (name: 'admin' | 'edit' | 'view', labels?: Record<string, string>): DefaultClusterRole => ({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRole',
    metadata: meta(name, labels),
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [n.aggregateTo(name)]: 'true' } }] },
  });
  const { group, user, sa: saIn } = subjectsOf(domain);
  // the server's own component service accounts live in the system namespace
  const systemNamespace = systemNamespacesOf(domain).system;
  const sa = (name: string) => saIn(systemNamespace, name);
  const binding = (name: string, subjects: DefaultClusterRoleBinding['subjects'], roleName = name): DefaultClusterRoleBinding => ({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: roleName },
    subjects,
  });

  const clusterRoles: DefaultClusterRole[] = [
    role('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    aggregated('admin'),
    aggregated('edit', { [n.aggregateTo('admin')]: 'true' }),
    aggregated('view', { [n.aggregateTo('edit')]: 'true' }),
    role('system:aggregate-to-admin', [
      rule(['create'], [g.authz], ['localsubjectaccessreviews']),
      rule(READ_WRITE, [rbac], ['rolebindings', 'roles']),
    ], { [n.aggregateTo('admin')]: 'true' }),
    role('system:aggregate-to-edit', [
      // reading the escalating resources (secrets, exec, …) is edit, not view
      rule(READ, [g.core], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
      rule(['impersonate'], [g.core], ['serviceaccounts']),
      rule(WRITE, [g.core], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
      rule(['create'], [g.core], ['pods/eviction']),
      rule(WRITE, [g.core], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy']),
      rule(['create'], [g.core], ['serviceaccounts/token']),
      rule(WRITE, [g.apps], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale']),
      rule(WRITE, [g.autoscaling], ['horizontalpodautoscalers']),
      rule(WRITE, [g.batch], ['cronjobs', 'jobs']),
      rule(WRITE, [g.policy], ['poddisruptionbudgets']),
      rule(WRITE, [g.networking], ['ingresses', 'networkpolicies']),
      rule(READ_WRITE, [g.coordination], ['leases']),
    ], { [n.aggregateTo('edit')]: 'true' }),
    role('system:aggregate-to-view', [
      rule(READ, [g.core], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status']),
      rule(READ, [g.core], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status']),
      // read access to namespaces at the namespace scope means reading *this* namespace
      rule(READ, [g.core], ['namespaces']),
      rule(READ, [g.discovery], ['endpointslices']),
      rule(READ, [g.events], ['events']),
      rule(READ, [g.apps], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']),
      rule(READ, [g.autoscaling], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(READ, [g.batch], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
      rule(READ, [g.policy], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(READ, [g.networking], ['ingresses', 'ingresses/status', 'networkpolicies']),
    ], { [n.aggregateTo('view')]: 'true' }),
    // metrics-server's reader role (its manifest installs it; orch serves metrics.<domain> itself, docs/metrics.md)
    role('system:aggregated-metrics-reader', [rule(READ, [g.metrics], ['pods', 'nodes'])], {
      [n.aggregateTo('admin')]: 'true',
      [n.aggregateTo('edit')]: 'true',
      [n.aggregateTo('view')]: 'true',
    }),
    role('system:basic-user', [
      rule(['create'], [g.authz], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], [g.authn], ['selfsubjectreviews']),
    ]),
    role('system:discovery', [
      urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/']),
    ]),
    role('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    role('system:service-account-issuer-discovery', [
      urls(['get'], ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/']),
    ]),
    role('system:monitoring', [
      urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*']),
    ]),
    role('system:node', [
      rule(['create'], [g.authn], ['tokenreviews']),
      rule(['create'], [g.authz], ['localsubjectaccessreviews', 'subjectaccessreviews']),
      rule(READ, [g.core], ['services']),
      rule(['create', 'get', 'list', 'watch'], [g.core], ['nodes']),
      rule(['patch', 'update'], [g.core], ['nodes/status']),
      rule(['patch', 'update'], [g.core], ['nodes']),
      eventsRule(domain),
      rule(READ, [g.core], ['pods']),
      rule(['create', 'delete'], [g.core], ['pods']),
      rule(['patch', 'update'], [g.core], ['pods/status']),
      rule(['create'], [g.core], ['pods/eviction']),
      rule(['get', 'list', 'watch'], [g.core], ['configmaps', 'secrets']),
      rule(['get'], [g.core], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['get'], [g.core], ['endpoints']),
      rule(['create', 'get', 'list', 'watch'], [g.certificates], ['certificatesigningrequests']),
      rule(['create', 'delete', 'get', 'patch', 'update'], [g.coordination], ['leases']),
      rule(['create'], [g.core], ['serviceaccounts/token']),
      rule(READ, [g.node], ['runtimeclasses']),
      rule(['get'], [g.storage], ['volumeattachments']),
      rule(['create', 'delete', 'get', 'patch', 'update'], [g.storage], ['csinodes']),
      rule(READ, [g.storage], ['csidrivers']),
    ]),
    // TLS bootstrapping (spec 001 §5.4): kube's roles, to be bound by the operator (or `orch bootstrap-kubeconfig`)
    role('system:node-bootstrapper', [rule(['create', 'get', 'list', 'watch'], [g.certificates], ['certificatesigningrequests'])]),
    role(`system:${g.certificates}:certificatesigningrequests:nodeclient`, [rule(['create'], [g.certificates], ['certificatesigningrequests/nodeclient'])]),
    role(`system:${g.certificates}:certificatesigningrequests:selfnodeclient`, [rule(['create'], [g.certificates], ['certificatesigningrequests/selfnodeclient'])]),
    ...Object.values(signers).map((signer) =>
      role(`system:${g.certificates}:${signer.slice(signer.indexOf('/') + 1)}-approver`, [{ verbs: ['approve'], apiGroups: [g.certificates], resources: ['signers'], resourceNames: [signer] }]),
    ),
    // the csrsigning, csrapproving and csrcleaner controllers (src/controllers/certificates/)
    role('system:controller:certificate-controller', [
      rule(['delete', 'get', 'list', 'watch'], [g.certificates], ['certificatesigningrequests']),
      rule(['update'], [g.certificates], ['certificatesigningrequests/approval', 'certificatesigningrequests/status']),
      { verbs: ['approve'], apiGroups: [g.certificates], resources: ['signers'], resourceNames: [signers.kubeletClient] },
      { verbs: ['sign'], apiGroups: [g.certificates], resources: ['signers'], resourceNames: [signers.legacyUnknown, signers.kubeletServing, signers.kubeletClient, signers.apiServerClient] },
      rule(['create'], [g.authz], ['subjectaccessreviews']),
      eventsRule(domain),
    ]),
    role('system:node-proxier', [
      rule(['list', 'watch'], [g.core], ['endpoints', 'services']),
      rule(['get', 'list', 'watch'], [g.core], ['nodes']),
      eventsRule(domain),
      rule(['list', 'watch'], [g.discovery], ['endpointslices']),
    ]),
    // kube's component roles (spec 001 §5.14 "system:<component>"), for components run out of process and for
    // extension servers: metrics-server and aggregated API servers bind system:auth-delegator for delegated
    // authentication and authorization
    role('system:auth-delegator', [rule(['create'], [g.authn], ['tokenreviews']), rule(['create'], [g.authz], ['subjectaccessreviews'])]),
    role('system:kube-aggregator', [rule(READ, [g.core], ['services', 'endpoints'])]),
    role('system:heapster', [rule(READ, [g.core], ['events', 'pods', 'nodes', 'namespaces']), rule(READ, [g.extensions], ['deployments'])]),
    role('system:node-problem-detector', [rule(['get'], [g.core], ['nodes']), rule(['patch'], [g.core], ['nodes/status']), eventsRule(domain)]),
    role('system:kube-controller-manager', [
      eventsRule(domain),
      rule(['create'], [g.coordination], ['leases']),
      rule(['get', 'update'], [g.coordination], ['leases'], ['kube-controller-manager']),
      rule(['create'], [g.core], ['secrets', 'serviceaccounts']),
      rule(['delete'], [g.core], ['secrets']),
      rule(['get'], [g.core], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
      rule(['update'], [g.core], ['secrets', 'serviceaccounts']),
      rule(['create'], [g.authn], ['tokenreviews']),
      rule(['create'], [g.authz], ['subjectaccessreviews']),
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['create'], [g.core], ['serviceaccounts/token']),
    ]),
    role('system:kube-scheduler', [
      eventsRule(domain),
      rule(['create'], [g.coordination], ['leases']),
      rule(['get', 'update', 'list', 'watch'], [g.coordination], ['leases'], ['kube-scheduler']),
      rule(READ_WRITE, [g.coordination], ['leasecandidates']),
      rule(READ, [g.core], ['nodes']),
      rule(['get', 'list', 'watch', 'delete'], [g.core], ['pods']),
      rule(['create'], [g.core], ['pods/binding', 'bindings']),
      rule(['patch', 'update'], [g.core], ['pods/status']),
      rule(READ, [g.core], ['services', 'replicationcontrollers']),
      rule(READ, [g.apps, g.extensions], ['replicasets']),
      rule(READ, [g.apps], ['statefulsets']),
      rule(READ, [g.policy], ['poddisruptionbudgets']),
      rule(READ, [g.core], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['create'], [g.authn], ['tokenreviews']),
      rule(['create'], [g.authz], ['subjectaccessreviews']),
      rule(READ, [g.storage], ['csinodes']),
      rule(['get', 'list', 'watch'], [g.storage], ['volumeattachments']),
      rule(READ, [g.core], ['namespaces']),
      rule(READ, [g.storage], ['csidrivers']),
      rule(READ, [g.storage], ['csistoragecapacities']),
    ]),
    role('system:volume-scheduler', [
      rule(READ_UPDATE, [g.core], ['persistentvolumes']),
      rule(READ, [g.storage], ['storageclasses']),
      rule(READ_UPDATE, [g.core], ['persistentvolumeclaims']),
    ]),
    role('system:kube-dns', [rule(['list', 'watch'], [g.core], ['endpoints', 'services'])]),
    role('system:persistent-volume-provisioner', [
      rule(['get', 'list', 'watch', 'create', 'delete'], [g.core], ['persistentvolumes']),
      rule(['get', 'list', 'watch', 'update'], [g.core], ['persistentvolumeclaims']),
      rule(READ, [g.storage], ['storageclasses']),
      rule(['watch'], [g.core], ['events']),
      eventsRule(domain),
    ]),
    role('system:kubelet-api-admin', [
      rule(['get', 'list', 'watch'], [g.core], ['nodes']),
      rule(['proxy'], [g.core], ['nodes']),
      rule(['*'], [g.core], ['nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log']),
    ]),
    // the in-process controllers of this server (src/controllers/) write through the store and need no
    // credentials; these roles describe what each needs, for operators who run them out of process
    role('system:controller:namespace-controller', [
      rule(['delete', 'get', 'list', 'watch'], [g.core], ['namespaces']),
      rule(['update'], [g.core], ['namespaces/finalize', 'namespaces/status']),
      rule(['delete', 'deletecollection', 'get', 'list'], ['*'], ['*']),
    ]),
    role('system:controller:generic-garbage-collector', [rule(['delete', 'get', 'list', 'patch', 'update', 'watch'], ['*'], ['*'])]),
    role('system:controller:clusterrole-aggregation-controller', [rule(['escalate', 'get', 'list', 'patch', 'update', 'watch'], [rbac], ['clusterroles'])]),
    // kube's disruption-controller role: the workloads' scale, the budgets, their status, events
    role('system:controller:disruption-controller', [
      rule(READ, [g.apps], ['deployments', 'replicasets', 'statefulsets']),
      rule(READ, [g.core], ['replicationcontrollers', 'pods']),
      rule(READ, [g.policy], ['poddisruptionbudgets']),
      rule(['update'], [g.policy], ['poddisruptionbudgets/status']),
      rule(['get'], ['*'], ['*/scale']),
      eventsRule(domain),
    ]),
    // kube's endpoint-controller and endpointslice-controller roles (src/controllers/endpoints/)
    role('system:controller:endpoint-controller', [
      rule(['get', 'list', 'watch'], [g.core], ['pods', 'services']),
      rule(['create', 'delete', 'get', 'list', 'update'], [g.core], ['endpoints']),
      rule(['create'], [g.core], ['endpoints/restricted']),
      eventsRule(domain),
    ]),
    role('system:controller:endpointslice-controller', [
      rule(['get', 'list', 'watch'], [g.core], ['nodes', 'pods', 'services']),
      // its slices' owner reference sets blockOwnerDeletion, which needs update on the Service's finalizers
      rule(['update'], [g.core], ['services/finalizers']),
      rule(['create', 'delete', 'get', 'list', 'update'], [g.discovery], ['endpointslices']),
      eventsRule(domain),
    ]),
  ];

  const clusterRoleBindings: DefaultClusterRoleBinding[] = [
    binding('cluster-admin', [group('system:masters')]),
    binding('system:basic-user', [group('system:authenticated')]),
    binding('system:discovery', [group('system:authenticated')]),
    binding('system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
    binding('system:monitoring', [group('system:monitoring')]),
    // kube binds issuer discovery to service accounts only; operators may add system:unauthenticated
    binding('system:service-account-issuer-discovery', [group('system:serviceaccounts')]),
    // nodes are authorized by the Node authorizer; kube keeps this binding with no subjects
    binding('system:node', []),
    binding('system:node-proxier', [user('system:kube-proxy')]),
    binding('system:kube-controller-manager', [user('system:kube-controller-manager')]),
    binding('system:kube-dns', [sa('kube-dns')]),
    binding('system:kube-scheduler', [user('system:kube-scheduler')]),
    binding('system:volume-scheduler', [user('system:kube-scheduler')]),
    ...['namespace-controller', 'generic-garbage-collector', 'clusterrole-aggregation-controller', 'disruption-controller', 'endpoint-controller', 'endpointslice-controller', 'certificate-controller'].map((c) =>
      binding(`system:controller:${c}`, [sa(c)]),
    ),
  ];
  return { clusterRoles, clusterRoleBindings, ...defaultNamespacePolicy(domain) };
}
