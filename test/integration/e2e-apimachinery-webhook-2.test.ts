// Port of Kubernetes' admission webhook conformance tests, second part
// (test/e2e/apimachinery/webhook.go): custom resources (deny create, update
// and delete; mutate; mutate with a different storage version; mutate with
// pruning), denying a CRD, patching/updating and listing webhook
// configurations, and the match-condition tests of release 1.28. Shared
// steps: test/helpers/kube-e2e-webhook.ts; the first part:
// e2e-apimachinery-webhook.test.ts.

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { CRDS, type Obj, call, createCrdAndWait, deleteCrdAndWait, generateName, listItems } from '../helpers/kube-e2e.js';
import {
  MWC,
  VWC,
  type WebhookTestEnv,
  cmPath,
  coreRule,
  createConfiguration,
  denyConfigMapWebhook,
  groupRule,
  isReadyWebhook,
  mutateConfigMapWebhook,
  namedNonCompliantConfigMap,
  namedToBeMutatedConfigMap,
  refused,
  register,
  useWebhookEnv,
  uuid,
  waitReady,
  webhook,
} from '../helpers/kube-e2e-webhook.js';

const env = useWebhookEnv();
const GROUP = 'webhook.example.com';
const preserve = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };

/** test/utils/crd CreateMultiVersionTestCRD: a namespaced CRD named e2e-test-<base>-<random>-crd, by default v1 only */
function testCrd(versions: Obj[] = [{ name: 'v1', served: true, storage: true, schema: preserve }]): Obj {
  const name = `e2e-test-webhook-${generateName('').slice(0, 4)}-crd`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}s.${GROUP}` },
    spec: { group: GROUP, names: { plural: `${name}s`, singular: name, kind: name, listKind: `${name}List` }, scope: 'Namespaced', versions },
  };
}
/** createAdmissionWebhookMultiVersionTestCRDWithV1Storage: v1 (storage) and v2, both served */
const multiVersionCrd = (schema: Obj = preserve): Obj =>
  testCrd([
    { name: 'v1', served: true, storage: true, schema },
    { name: 'v2', served: true, storage: false, schema },
  ]);

const crRule = (crd: Obj, operations: string[]): Obj =>
  groupRule(operations, [crd.spec.group], (crd.spec.versions as Obj[]).filter((v) => v.served).map((v) => v.name as string), [crd.spec.names.plural]);
const crPath = (crd: Obj, ns: string, version = 'v1', name = ''): string => `/apis/${crd.spec.group}/${version}/namespaces/${ns}/${crd.spec.names.plural}${name ? `/${name}` : ''}`;
const cr = (crd: Obj, ns: string, name: string, data: Obj): Obj => ({ kind: crd.spec.names.kind, apiVersion: `${crd.spec.group}/${crd.spec.versions[0].name}`, metadata: { name, namespace: ns }, data });

/** CreateTestCRD with its cleanup */
async function withCrd(e: WebhookTestEnv, crd: Obj, body: (crd: Obj) => Promise<void>): Promise<void> {
  await createCrdAndWait(e.t, crd);
  try {
    await body(crd);
  } finally {
    await deleteCrdAndWait(e.t, crd.metadata.name);
  }
}

/** registerMutatingWebhookForCustomResource: stage 1 on create and update, stage 2 on create */
async function registerCrMutation(e: WebhookTestEnv, crd: Obj): Promise<void> {
  await register(e, 'mutating', e.unique, [
    webhook(e, 'mutate-custom-resource-data-stage-1.k8s.io', '/mutating-custom-resource', [crRule(crd, ['CREATE', 'UPDATE'])]),
    webhook(e, 'mutate-custom-resource-data-stage-2.k8s.io', '/mutating-custom-resource', [crRule(crd, ['CREATE'])]),
  ]);
}

/** testMutatingCustomResourceWebhook */
async function expectCrMutated(e: WebhookTestEnv, crd: Obj, prune: boolean): Promise<void> {
  const got = await call(e.t, 'POST', crPath(crd, e.ns), cr(crd, e.ns, 'cr-instance-1', { 'mutation-start': 'yes' }));
  expect(got.data).toEqual({ 'mutation-start': 'yes', 'mutation-stage-1': 'yes', ...(prune ? {} : { 'mutation-stage-2': 'yes' }) });
}

/** creates configmaps with fresh names until `ok` holds for one (kube polls the same way), deleting the created ones */
async function pollConfigMaps(e: WebhookTestEnv, make: (name: string) => Obj, ok: (r: { status: number; body: Obj }) => boolean, what: string): Promise<void> {
  await eventually(async () => {
    const m = make(uuid());
    const r = await e.t.request('POST', cmPath(e.ns), { body: m });
    const body = r.json<Obj>();
    if (r.status < 300) await call(e.t, 'DELETE', cmPath(e.ns, m.metadata.name));
    else expect(body.message).toContain('denied');
    return ok({ status: r.status, body });
  }, what);
}
const deniedCreate = (e: WebhookTestEnv) => pollConfigMaps(e, namedNonCompliantConfigMap, (r) => r.status >= 400, 'a non-compliant configmap denied');
const allowedCreate = (e: WebhookTestEnv) => pollConfigMaps(e, namedNonCompliantConfigMap, (r) => r.status < 300, 'a non-compliant configmap allowed');
const mutatedCreate = (e: WebhookTestEnv, mutated: boolean) =>
  pollConfigMaps(e, namedToBeMutatedConfigMap, (r) => r.status < 300 && 'mutation-stage-1' in (r.body.data ?? {}) === mutated, `a configmap ${mutated ? '' : 'not '}mutated`);

const OPERATIONS_PATCH = [{ op: 'replace', path: '/webhooks/0/rules/0/operations', value: ['CREATE'] }];

describe('AdmissionWebhook [Privileged:ClusterAdmin] (custom resources, configurations)', () => {
  it('should be able to deny custom resource creation, update and deletion [Conformance]', async () => {
    const e = env();
    await withCrd(e, testCrd(), async (crd) => {
      await register(e, 'validating', e.unique, [webhook(e, 'deny-unwanted-custom-resource-data.k8s.io', '/custom-resource', [crRule(crd, ['CREATE', 'UPDATE', 'DELETE'])])]);
      const unwanted = 'the custom resource contains unwanted data';
      expect((await refused(e.t, 'POST', crPath(crd, e.ns), cr(crd, e.ns, 'cr-instance-1', { 'webhook-e2e-test': 'webhook-disallow' }))).message).toContain(unwanted);

      const path = crPath(crd, e.ns, 'v1', 'cr-instance-2');
      await call(e.t, 'POST', crPath(crd, e.ns), cr(crd, e.ns, 'cr-instance-2', { 'webhook-e2e-test': 'webhook-nondeletable' }));
      const toUpdate = await call(e.t, 'GET', path);
      toUpdate.data['webhook-e2e-test'] = 'webhook-disallow';
      expect((await refused(e.t, 'PUT', path, toUpdate)).message).toContain(unwanted);

      const del = await refused(e.t, 'DELETE', path, undefined);
      expect(del.message).toContain('the custom resource cannot be deleted because it contains unwanted key and value');

      const compliant = await call(e.t, 'GET', path);
      compliant.data['webhook-e2e-test'] = 'webhook-allow';
      await call(e.t, 'PUT', path, compliant);
      await call(e.t, 'DELETE', path);
    });
  });

  it('should mutate custom resource [Conformance]', async () => {
    const e = env();
    await withCrd(e, testCrd(), async (crd) => {
      await registerCrMutation(e, crd);
      await expectCrMutated(e, crd, false);
    });
  });

  it('should deny crd creation [Conformance]', async () => {
    const e = env();
    await register(e, 'validating', e.unique, [
      webhook(e, 'deny-crd-with-unwanted-label.k8s.io', '/crd', [groupRule(['CREATE'], ['apiextensions.k8s.io'], ['*'], ['customresourcedefinitions'])], {
        namespaceSelector: undefined,
        objectSelector: { matchLabels: { [e.unique]: 'true' } },
      }),
    ]);
    const name = 'e2e-test-webhook-deny-crd';
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${name}s.${GROUP}`, labels: { [e.unique]: 'true', 'webhook-e2e-test': 'webhook-disallow' } },
      spec: {
        group: GROUP,
        versions: [{ name: 'v1', served: true, storage: true, schema: preserve }],
        names: { singular: name, kind: 'E2e-test-webhook-deny-crd', listKind: 'E2e-test-webhook-deny-crdList', plural: `${name}s` },
        scope: 'Namespaced',
      },
    };
    expect((await refused(e.t, 'POST', CRDS, crd)).message).toContain('the crd contains unwanted label');
  });

  it('should mutate custom resource with different stored version [Conformance]', async () => {
    const e = env();
    await withCrd(e, multiVersionCrd(), async (crd) => {
      await registerCrMutation(e, crd);
      await call(e.t, 'POST', crPath(crd, e.ns), cr(crd, e.ns, 'cr-instance-1', { 'mutation-start': 'yes' }));
      const v2Storage = {
        spec: {
          versions: [
            { name: 'v1', storage: false, served: true, schema: preserve },
            { name: 'v2', storage: true, served: true, schema: preserve },
          ],
        },
      };
      await call(e.t, 'PATCH', `${CRDS}/${crd.metadata.name}`, v2Storage, 'application/strategic-merge-patch+json');
      // the v2 resource path takes the patch once the new storage version is in force
      const got = await call(e.t, 'PATCH', crPath(crd, e.ns, 'v2', 'cr-instance-1'), [{ op: 'add', path: '/dummy', value: 'test' }], 'application/json-patch+json');
      expect(got.data).toEqual({ 'mutation-start': 'yes', 'mutation-stage-1': 'yes', 'mutation-stage-2': 'yes' });
      expect(got.dummy).toBe('test');
    });
  });

  it('should mutate custom resource with pruning [Conformance]', async () => {
    const e = env();
    const schema = {
      openAPIV3Schema: {
        type: 'object',
        // mutation-stage-2 is left out so that it is pruned
        properties: { data: { type: 'object', properties: { 'mutation-start': { type: 'string' }, 'mutation-stage-1': { type: 'string' } } } },
      },
    };
    await withCrd(e, multiVersionCrd(schema), async (crd) => {
      await registerCrMutation(e, crd);
      await expectCrMutated(e, crd, true);
    });
  });

  it('patching/updating a validating webhook should work [Conformance]', async () => {
    const e = env();
    await createConfiguration(e, 'validating', e.unique, [denyConfigMapWebhook(e), isReadyWebhook(e, 'validating')]);
    await waitReady(e);
    await deniedCreate(e);

    const h = await call(e.t, 'GET', `${VWC}/${e.unique}`);
    h.webhooks[0].rules[0].operations = ['UPDATE'];
    await call(e.t, 'PUT', `${VWC}/${e.unique}`, h);
    await allowedCreate(e);

    await call(e.t, 'PATCH', `${VWC}/${e.unique}`, OPERATIONS_PATCH, 'application/json-patch+json');
    await deniedCreate(e);
  });

  it('patching/updating a mutating webhook should work [Conformance]', async () => {
    const e = env();
    await createConfiguration(e, 'mutating', e.unique, [mutateConfigMapWebhook(e, 1), isReadyWebhook(e, 'mutating')]);
    await waitReady(e);

    const h = await call(e.t, 'GET', `${MWC}/${e.unique}`);
    h.webhooks[0].rules[0].operations = ['UPDATE'];
    await call(e.t, 'PUT', `${MWC}/${e.unique}`, h);
    await mutatedCreate(e, false);

    await call(e.t, 'PATCH', `${MWC}/${e.unique}`, OPERATIONS_PATCH, 'application/json-patch+json');
    await mutatedCreate(e, true);
  });

  for (const kind of ['validating', 'mutating'] as const) {
    it(`listing ${kind} webhooks should work [Conformance]`, async () => {
      const e = env();
      const testUuid = uuid();
      const first = kind === 'validating' ? denyConfigMapWebhook(e) : mutateConfigMapWebhook(e, 1);
      for (let i = 0; i < 10; i++) await createConfiguration(e, kind, `${e.unique}-${i}`, [first, isReadyWebhook(e, kind)], { 'e2e-list-test-uuid': testUuid });
      const collection = `${kind === 'validating' ? VWC : MWC}?labelSelector=${encodeURIComponent(`e2e-list-test-uuid=${testUuid}`)}`;
      expect(await listItems(e.t, collection)).toHaveLength(10);
      await waitReady(e);
      await (kind === 'validating' ? deniedCreate(e) : mutatedCreate(e, true));

      await call(e.t, 'DELETE', collection);
      expect(await listItems(e.t, collection)).toHaveLength(0);
      await (kind === 'validating' ? allowedCreate(e) : mutatedCreate(e, false));
    });
  }
});

describe('AdmissionWebhook [Privileged:ClusterAdmin] (match conditions, release 1.28)', () => {
  const production = { name: 'expression-1', expression: "object.metadata.namespace == 'production'" };
  const staging = { name: 'expression-2', expression: "object.metadata.namespace == 'staging'" };
  /** newValidatingWebhookWithMatchConditions / newMutatingWebhookWithMatchConditions */
  const withConditions = (e: WebhookTestEnv, kind: 'validating' | 'mutating', matchConditions: Obj[]): Obj[] => [
    kind === 'validating'
      ? webhook(e, 'validation-webhook-with-match-conditions.k8s.io', '/always-deny', [coreRule(['CREATE'], 'configmaps')], { matchPolicy: 'Equivalent', matchConditions })
      : webhook(e, 'adding-configmap-data.k8s.io', '/mutating-configmaps', [coreRule(['CREATE'], 'configmaps')], { matchConditions }),
    isReadyWebhook(e, kind),
  ];

  for (const kind of ['validating', 'mutating'] as const) {
    const path = kind === 'validating' ? VWC : MWC;

    it(`should be able to create and update ${kind} webhook configurations with match conditions [Conformance]`, async () => {
      const e = env();
      await createConfiguration(e, kind, e.unique, withConditions(e, kind, [production]));
      const got = await call(e.t, 'GET', `${path}/${e.unique}`);
      expect(got.webhooks[0].matchConditions).toEqual([production]);
      got.webhooks[0].matchConditions = [production, staging];
      await call(e.t, 'PUT', `${path}/${e.unique}`, got);
      expect((await call(e.t, 'GET', `${path}/${e.unique}`)).webhooks[0].matchConditions).toEqual([production, staging]);
    });

    it(`should reject ${kind} webhook configurations with invalid match conditions [Conformance]`, async () => {
      const e = env();
      const body = { metadata: { name: e.unique }, webhooks: withConditions(e, kind, [{ name: 'invalid-expression-1', expression: '... [] bad expression' }]) };
      const s = await refused(e.t, 'POST', path, body, 422);
      expect(s.message).toContain('compilation failed');
    });
  }

  it("should mutate everything except 'skip-me' configmaps [Conformance]", async () => {
    const e = env();
    const hook = { ...mutateConfigMapWebhook(e, 1), matchConditions: [{ name: 'skip-me', expression: "object.metadata.name != 'skip-me'" }] };
    await createConfiguration(e, 'mutating', e.unique, [hook, isReadyWebhook(e, 'mutating')]);
    await waitReady(e);
    const mutated = await call(e.t, 'POST', cmPath(e.ns), namedToBeMutatedConfigMap(uuid()));
    expect(mutated.data).toEqual({ 'mutation-start': 'yes', 'mutation-stage-1': 'yes' });
    const skipped = await call(e.t, 'POST', cmPath(e.ns), namedToBeMutatedConfigMap('skip-me'));
    expect(skipped.data).toEqual({ 'mutation-start': 'yes' });
  });
});
