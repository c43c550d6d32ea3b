// rbac.authorization.<domain>/v1 Role, ClusterRole, RoleBinding and
// ClusterRoleBinding (spec 001). roleRef is required and cannot change.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { column, get, getArray, getObject, getString } from './columns.js';
import { atomicList, obj, proto, ref, str } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { goStruct } from './field-errors.js';
import { isDNS1123Subdomain } from '../../machinery/schema/object-meta.js';

const strings = (d: string) => atomicList(d, { type: 'string' });

function policyRule(): ReturnType<typeof obj> {
  return obj('A set of actions a subject may perform: verbs on resources or on non-resource URLs.', proto({ verbs: 1, apiGroups: 2, resources: 3, resourceNames: 4, nonResourceURLs: 5 }, {
    verbs: strings('Verbs the rule allows; "*" means all.'),
    apiGroups: strings('API groups of the resources; "" is the core group, "*" all groups.'),
    resources: strings('Resources the rule applies to; "*" means all, "pods/status" a sub-resource.'),
    resourceNames: strings('Optional allow-list of object names.'),
    nonResourceURLs: strings('Partial URLs like /healthz (a trailing * is a prefix match); only in ClusterRoles bound cluster-wide.'),
  }), ['verbs']);
}

function validateRules(o: ApiObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  getArray(o, 'rules').forEach((r, i) => {
    const p = `rules[${i}]`;
    const len = (f: string) => getArray(r, f).length;
    if (len('verbs') === 0) errs.push({ field: `${p}.verbs`, type: 'FieldValueRequired', message: 'Required value: verbs must contain at least one value' });
    if (len('nonResourceURLs') > 0) {
      const urls = get(r, 'nonResourceURLs');
      if (namespaced) errs.push({ field: `${p}.nonResourceURLs`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(urls)}: namespaced rules cannot apply to non-resource URLs` });
      if (len('apiGroups') > 0 || len('resources') > 0 || len('resourceNames') > 0) {
        errs.push({ field: `${p}.nonResourceURLs`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(urls)}: rules cannot apply to both regular resources and non-resource URLs` });
      }
      return;
    }
    if (len('apiGroups') === 0) errs.push({ field: `${p}.apiGroups`, type: 'FieldValueRequired', message: 'Required value: resource rules must supply at least one api group' });
    if (len('resources') === 0) errs.push({ field: `${p}.resources`, type: 'FieldValueRequired', message: 'Required value: resource rules must supply at least one resource' });
  });
  return errs;
}

export function roleDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('rbac.authorization'),
    version: 'v1',
    kind: 'Role',
    resource: 'roles',
    singular: 'role',
    scope: 'Namespaced',
    nameValidation: 'PathSegment',
    schema: kindSchema(n, 'Role is a namespaced, logical grouping of PolicyRules that a RoleBinding can reference as a unit.', proto({ rules: 2 }, {
      rules: atomicList('The PolicyRules of this role.', ref(rbacName(n, 'PolicyRule'))),
    })),
    strategy: { validate: (o) => validateRules(o, true) },
  };
}

export function clusterRoleDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('rbac.authorization'),
    version: 'v1',
    kind: 'ClusterRole',
    resource: 'clusterroles',
    singular: 'clusterrole',
    scope: 'Cluster',
    nameValidation: 'PathSegment',
    schema: kindSchema(n, 'ClusterRole is a cluster-level, logical grouping of PolicyRules that a RoleBinding or ClusterRoleBinding can reference.', proto({ rules: 2, aggregationRule: 3 }, {
      rules: atomicList('The PolicyRules of this role.', ref(rbacName(n, 'PolicyRule'))),
      aggregationRule: obj('How to build the rules of this role from other ClusterRoles; if set, rules are controller-managed.', proto({ clusterRoleSelectors: 1 }, {
        clusterRoleSelectors: atomicList('Selectors of ClusterRoles whose rules are aggregated.', ref(n.meta('LabelSelector'))),
      })),
    })),
    strategy: { validate: (o) => validateRules(o, false) },
  };
}

export function rbacName(n: SchemaNames, kind: string): string {
  return n.kind(n.group('rbac.authorization'), 'v1', kind);
}

/** shared RBAC structures ($ref targets) */
export function rbacDefinitions(n: SchemaNames): Record<string, ReturnType<typeof obj>> {
  return {
    [rbacName(n, 'PolicyRule')]: policyRule(),
    [rbacName(n, 'Subject')]: obj('A reference to a user, group or service account.', proto({ kind: 1, apiGroup: 2, name: 3, namespace: 4 }, {
      kind: str('ServiceAccount, User or Group.'),
      apiGroup: str(`API group of the subject: "" for ServiceAccount, "rbac.authorization.${n.apiDomain}" for User and Group.`),
      name: str('Name of the subject.'),
      namespace: str('Namespace of a ServiceAccount subject.'),
    }), ['kind', 'name'], { 'x-orch-map-type': 'atomic' }),
    [rbacName(n, 'RoleRef')]: obj('The role a binding grants.', proto({ apiGroup: 1, kind: 2, name: 3 }, {
      apiGroup: str('API group of the role.'),
      kind: str('Role or ClusterRole.'),
      name: str('Name of the role.'),
    }), ['apiGroup', 'kind', 'name'], { 'x-orch-map-type': 'atomic' }),
  };
}

function bindingSchema(n: SchemaNames, description: string) {
  return kindSchema(n, description, proto({ subjects: 2, roleRef: 3 }, {
    subjects: atomicList('The subjects the role applies to.', ref(rbacName(n, 'Subject'))),
    roleRef: ref(rbacName(n, 'RoleRef'), 'The role granted; cannot be changed once set.'),
  }), ['roleRef']);
}

function validateBinding(o: ApiObject, n: SchemaNames, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const rbacGroup = n.group('rbac.authorization');
  const rr = getObject(o, 'roleRef');
  if (rr) {
    const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
    const kind = getString(rr, 'kind') ?? '';
    if (!kinds.includes(kind)) {
      errs.push({ field: 'roleRef.kind', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(kind)}: supported values: ${kinds.map((k) => `"${k}"`).join(', ')}` });
    }
    const g = getString(rr, 'apiGroup') ?? '';
    if (g !== rbacGroup) {
      errs.push({ field: 'roleRef.apiGroup', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(g)}: supported values: "${rbacGroup}"` });
    }
  }
  getArray(o, 'subjects').forEach((s, i) => {
    const p = `subjects[${i}]`;
    const kind = getString(s, 'kind') ?? '';
    const g = getString(s, 'apiGroup') ?? '';
    const name = getString(s, 'name') ?? '';
    if (name === '') errs.push({ field: `${p}.name`, type: 'FieldValueRequired', message: 'Required value' });
    switch (kind) {
      case 'ServiceAccount':
        for (const m of name === '' ? [] : isDNS1123Subdomain(name)) errs.push({ field: `${p}.name`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(name)}: ${m}` });
        if (g !== '') errs.push({ field: `${p}.apiGroup`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(g)}: supported values: ""` });
        if (!namespaced && !getString(s, 'namespace')) errs.push({ field: `${p}.namespace`, type: 'FieldValueRequired', message: 'Required value' });
        break;
      case 'User':
      case 'Group':
        if (g !== rbacGroup) errs.push({ field: `${p}.apiGroup`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(g)}: supported values: "${rbacGroup}"` });
        break;
      default:
        if (kind) errs.push({ field: `${p}.kind`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(kind)}: supported values: "ServiceAccount", "User", "Group"` });
    }
  });
  return errs;
}

/** kube's rbac/v1 SetDefaults_RoleBinding and SetDefaults_Subject: the RBAC group for roleRef, Users and Groups */
function defaultBinding(o: ApiObject, rbacGroup: string): void {
  const rr = getObject(o, 'roleRef');
  if (rr && !rr.apiGroup) rr.apiGroup = rbacGroup;
  for (const s of getArray(o, 'subjects')) {
    if (!s || typeof s !== 'object' || Array.isArray(s) || s.apiGroup) continue;
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = rbacGroup;
  }
}

function roleRefImmutable(o: ApiObject, old: ApiObject): FieldError[] {
  const a = JSON.stringify(sorted(o.roleRef as JSONValue));
  const b = JSON.stringify(sorted(old.roleRef as JSONValue));
  if (a === b) return [];
  // kube gives the new rbac.RoleRef back as Go prints it
  const shown = goStruct('rbac.RoleRef', [['APIGroup', 'apiGroup'], ['Kind', 'kind'], ['Name', 'name']], o.roleRef);
  return [{ field: 'roleRef', type: 'FieldValueInvalid', message: `Invalid value: ${shown}: cannot change roleRef` }];
}

function sorted(v: JSONValue | undefined): JSONValue | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function subjectsOf(o: ApiObject, kind: string): string {
  const out = getArray(o, 'subjects')
    .filter((s) => get(s, 'kind') === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${getString(s, 'namespace') ?? ''}/${getString(s, 'name') ?? ''}` : (getString(s, 'name') ?? '')));
  return out.join(', ');
}

function bindingColumns() {
  return [
    column('Role', 'string', (o: ApiObject) => `${getString(o, 'roleRef', 'kind') ?? ''}/${getString(o, 'roleRef', 'name') ?? ''}`),
    column('Users', 'string', (o: ApiObject) => subjectsOf(o, 'User'), { priority: 1 }),
    column('Groups', 'string', (o: ApiObject) => subjectsOf(o, 'Group'), { priority: 1 }),
    column('ServiceAccounts', 'string', (o: ApiObject) => subjectsOf(o, 'ServiceAccount'), { priority: 1 }),
  ];
}

export function roleBindingDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('rbac.authorization'),
    version: 'v1',
    kind: 'RoleBinding',
    resource: 'rolebindings',
    singular: 'rolebinding',
    scope: 'Namespaced',
    nameValidation: 'PathSegment',
    schema: bindingSchema(n, 'RoleBinding grants the permissions of a Role or ClusterRole to subjects within one namespace.'),
    strategy: {
      default: (o) => defaultBinding(o, n.group('rbac.authorization')),
      validate: (o) => validateBinding(o, n, true),
      validateUpdate: (o, old) => [...validateBinding(o, n, true), ...roleRefImmutable(o, old)],
      columns: bindingColumns(),
    },
  };
}

export function clusterRoleBindingDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('rbac.authorization'),
    version: 'v1',
    kind: 'ClusterRoleBinding',
    resource: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    scope: 'Cluster',
    nameValidation: 'PathSegment',
    schema: bindingSchema(n, 'ClusterRoleBinding grants the permissions of a ClusterRole to subjects cluster-wide.'),
    strategy: {
      default: (o) => defaultBinding(o, n.group('rbac.authorization')),
      validate: (o) => validateBinding(o, n, false),
      validateUpdate: (o, old) => [...validateBinding(o, n, false), ...roleRefImmutable(o, old)],
      columns: bindingColumns(),
    },
  };
}
