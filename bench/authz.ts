// Authorization decision cost (spec 001 §5.14, issue 10): the RBAC evaluator
// (through the whole chain: system:masters, Node placeholder, RBAC) with
// 1,000 ClusterRoles and 100 / 1,000 / 10,000 RoleBindings. The cluster grows
// the way real ones do: namespaces, users and groups grow with the bindings,
// so a user is bound about as often at every size (about 3 bindings per user,
// 10 per namespace, 20 per group); requests are a mix of allowed and not
// allowed resource requests and non-resource requests. The cost must stay
// flat as bindings grow (the index is by scope and subject, not a scan).
//
//   npx tsx bench/authz.ts [--decisions 200000] [--clusterroles 1000]
//
// Prints one JSON document.

import { AuthorizerChain, PrivilegedGroupAuthorizer } from '../src/auth/authz/chain.js';
import { RbacAuthorizer } from '../src/auth/authz/rbac/authorizer.js';
import { RbacIndex } from '../src/auth/authz/rbac/index.js';
import type { PolicyRule } from '../src/auth/authz/rbac/rules.js';
import type { RequestAttributes } from '../src/auth/authz/types.js';

function flag(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? Number(process.argv[i + 1]) : def;
}

const DECISIONS = flag('decisions', 200_000);
const CLUSTER_ROLES = flag('clusterroles', 1000);
const RESOURCES = ['pods', 'configmaps', 'secrets', 'services', 'deployments', 'jobs', 'leases', 'events'];
const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

/** deterministic PRNG (mulberry32) so runs compare */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Shape {
  users: number;
  namespaces: number;
  groups: number;
}

function build(bindings: number, rand: () => number): { index: RbacIndex } & Shape {
  const index = new RbacIndex();
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  for (let i = 0; i < CLUSTER_ROLES; i++) {
    const rules: PolicyRule[] = [];
    for (let r = 0; r < 6; r++) rules.push({ verbs: [pick(VERBS), pick(VERBS)], apiGroups: [pick(['', 'apps', 'batch'])], resources: [pick(RESOURCES), pick(RESOURCES)] });
    index.setClusterRole(`role-${i}`, rules);
  }
  const users = Math.max(10, Math.floor(bindings / 3));
  const namespaces = Math.max(10, Math.floor(bindings / 10));
  const groups = Math.max(5, Math.floor(bindings / 20));
  for (let i = 0; i < bindings; i++) {
    const ns = `ns-${Math.floor(rand() * namespaces)}`;
    const subjects = [{ kind: 'User', name: `user-${Math.floor(rand() * users)}` }, { kind: 'Group', name: `team-${Math.floor(rand() * groups)}` }];
    if (rand() < 0.3) subjects.push({ kind: 'ServiceAccount', name: `sa-${i % 20}`, namespace: ns } as { kind: string; name: string; namespace: string });
    index.setBinding('RoleBinding', ns, `b-${i}`, { kind: 'RoleBinding', name: `b-${i}`, namespace: ns, roleRef: { kind: 'ClusterRole', name: `role-${Math.floor(rand() * CLUSTER_ROLES)}` }, subjects });
  }
  // the usual cluster-wide defaults everyone passes through
  index.setClusterRole('system:discovery', [{ verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/version'] }]);
  index.setBinding('ClusterRoleBinding', '', 'system:discovery', { kind: 'ClusterRoleBinding', name: 'system:discovery', namespace: '', roleRef: { kind: 'ClusterRole', name: 'system:discovery' }, subjects: [{ kind: 'Group', name: 'system:authenticated' }] });
  return { index, users, namespaces, groups };
}

async function measure(bindings: number): Promise<Record<string, number>> {
  const rand = rng(42);
  const { index, users, namespaces, groups } = build(bindings, rand);
  const chain = new AuthorizerChain([
    { type: 'SystemMasters', name: 'system:masters', authorizer: new PrivilegedGroupAuthorizer() },
    { type: 'RBAC', name: 'rbac', authorizer: new RbacAuthorizer(index, 'rbac.authorization.orch.io') },
  ]);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const reqs: RequestAttributes[] = [];
  for (let i = 0; i < 10_000; i++) {
    const resource = rand() < 0.9;
    reqs.push({
      user: { username: `user-${Math.floor(rand() * users)}`, groups: [`team-${Math.floor(rand() * groups)}`, `team-${Math.floor(rand() * groups)}`, 'system:authenticated'] },
      verb: resource ? pick(VERBS) : 'get',
      isResourceRequest: resource,
      path: resource ? '' : pick(['/api', '/apis/apps/v1', '/metrics']),
      apiGroup: resource ? pick(['', 'apps', 'batch']) : '',
      apiVersion: 'v1',
      namespace: resource ? `ns-${Math.floor(rand() * namespaces)}` : '',
      resource: resource ? pick(RESOURCES) : '',
      subresource: '',
      name: '',
    });
  }
  // warm-up
  for (let i = 0; i < 20_000; i++) await chain.authorize(reqs[i % reqs.length]!);
  const samples = new Float64Array(DECISIONS);
  let allowed = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < DECISIONS; i++) {
    const s = process.hrtime.bigint();
    const d = await chain.authorize(reqs[i % reqs.length]!);
    samples[i] = Number(process.hrtime.bigint() - s);
    if (d.decision === 'allow') allowed++;
  }
  const totalNs = Number(process.hrtime.bigint() - t0);
  samples.sort();
  const q = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))]! / 1000;
  return {
    bindings,
    clusterRoles: CLUSTER_ROLES,
    users,
    namespaces,
    groups,
    decisions: DECISIONS,
    allowedFraction: Number((allowed / DECISIONS).toFixed(3)),
    decisionsPerSecond: Math.round(DECISIONS / (totalNs / 1e9)),
    p50Micros: Number(q(0.5).toFixed(2)),
    p99Micros: Number(q(0.99).toFixed(2)),
  };
}

const results = [];
for (const b of [100, 1000, 10_000]) results.push(await measure(b));
process.stdout.write(`${JSON.stringify({ bench: 'authz', node: process.version, results }, null, 2)}\n`);
