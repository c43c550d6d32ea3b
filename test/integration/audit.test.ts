// Audit logging (issue 16 item 3, docs/audit.md): a real server with a policy
// and a log file; every event line checked field by field against the
// audit.orch.io/v1 Event shape for a create, a watch (ResponseStarted and
// ResponseComplete), a denied request, an impersonated request, a failed
// authentication and a deprecated endpoint.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_COMMON_NAME, ADMIN_ORGANIZATION } from '../../src/server/pki.js';
import { eventually } from '../helpers/eventually.js';
import { userCert } from '../helpers/identities.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';
import { openWatch } from '../helpers/watch-stream.js';

type Ev = Record<string, any>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const POLICY = `
apiVersion: audit.orch.io/v1
kind: Policy
omitManagedFields: false
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/metrics"]
  - level: RequestResponse
    omitManagedFields: true
    resources:
      - group: ""
        resources: ["configmaps"]
  - level: Metadata
`;

describe('audit log (issue 16 item 3)', () => {
  let t: TestServer;
  let dir: string;
  let logPath: string;

  const events = async (): Promise<Ev[]> => {
    const text = await readFile(logPath, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Ev);
  };
  /** the events of one request, in the order written, once `n` of them are there */
  const eventsOf = async (auditID: string, n: number): Promise<Ev[]> => {
    let found: Ev[] = [];
    await eventually(async () => {
      found = (await events()).filter((e) => e.auditID === auditID);
      return found.length >= n;
    }, `${n} audit events for ${auditID}`);
    return found;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-audit-'));
    logPath = join(dir, 'logs', 'audit.log');
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    t = await startTestServer({ audit: { policyFile: join(dir, 'policy.yaml'), logPath } });
  });
  afterAll(async () => {
    await t?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a create: RequestReceived and ResponseComplete, every field', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'audited' }, data: { k: 'v' } };
    const r = await t.request('POST', '/api/v1/namespaces/default/configmaps?fieldManager=audit-test', { body, headers: { 'User-Agent': 'audit-test/1.0' } });
    expect(r.status).toBe(201);
    const id = r.headers['audit-id'] as string;
    expect(id).toMatch(UUID);
    const [received, complete, ...rest] = await eventsOf(id, 2);
    expect(rest).toEqual([]);
    const user = { username: ADMIN_COMMON_NAME, groups: [ADMIN_ORGANIZATION, 'system:authenticated'] };
    const common = {
      kind: 'Event',
      apiVersion: 'audit.orch.io/v1',
      level: 'RequestResponse',
      auditID: id,
      requestURI: '/api/v1/namespaces/default/configmaps?fieldManager=audit-test',
      verb: 'create',
      user,
      sourceIPs: ['127.0.0.1'],
      userAgent: 'audit-test/1.0',
    };
    expect(received).toMatchObject({ ...common, stage: 'RequestReceived', objectRef: { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' } });
    expect(received!.objectRef.apiGroup).toBeUndefined();
    expect(received!.responseStatus).toBeUndefined();
    expect(received!.requestObject).toBeUndefined();
    expect(received!.annotations).toBeUndefined();
    expect(received!.requestReceivedTimestamp).toMatch(MICRO);
    expect(received!.stageTimestamp).toBe(received!.requestReceivedTimestamp);

    expect(complete).toMatchObject({
      ...common,
      stage: 'ResponseComplete',
      // the name comes from the request object, as kube completes objectRef
      objectRef: { resource: 'configmaps', namespace: 'default', name: 'audited', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 201 },
      requestObject: body,
      annotations: { 'authorization.orch.io/decision': 'allow' },
    });
    expect(Object.keys(complete!.annotations)).toContain('authorization.orch.io/reason');
    expect(complete!.responseStatus).toEqual({ metadata: {}, code: 201 });
    const created = r.json<{ metadata: { uid: string; managedFields?: unknown[] } }>();
    expect(complete!.responseObject.metadata.uid).toBe(created.metadata.uid);
    // omitManagedFields on the rule: the response had them, the event does not
    expect(created.metadata.managedFields?.length).toBeGreaterThan(0);
    expect(complete!.responseObject.metadata.managedFields).toBeUndefined();
    expect(complete!.requestReceivedTimestamp).toBe(received!.requestReceivedTimestamp);
    expect(complete!.stageTimestamp).toMatch(MICRO);
    expect(complete!.stageTimestamp >= complete!.requestReceivedTimestamp).toBe(true);
    // kube's field order
    expect(Object.keys(complete!)).toEqual([
      'kind', 'apiVersion', 'level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'sourceIPs', 'userAgent',
      'objectRef', 'responseStatus', 'requestObject', 'responseObject', 'requestReceivedTimestamp', 'stageTimestamp', 'annotations',
    ]);
  });

  it('a watch: ResponseStarted when the stream starts, ResponseComplete when it ends', async () => {
    const w = openWatch(t.server, '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1');
    const head = await w.response;
    expect(head.status).toBe(200);
    const id = head.headers['audit-id'] as string;
    expect(id).toMatch(UUID);
    expect(await w.ended).toBe(true);
    const evs = await eventsOf(id, 3);
    expect(evs.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    for (const e of evs) {
      expect(e).toMatchObject({ verb: 'watch', level: 'RequestResponse', objectRef: { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' } });
      expect(e.requestURI).toBe('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1');
      // a watch's stream is never logged as a response object
      expect(e.responseObject).toBeUndefined();
    }
    expect(evs[1]!.responseStatus).toEqual({ metadata: {}, code: 200 });
    expect(evs[2]!.responseStatus).toEqual({ metadata: {}, code: 200 });
    expect(evs[1]!.annotations['authorization.orch.io/decision']).toBe('allow');
    expect(evs[2]!.stageTimestamp >= evs[1]!.stageTimestamp).toBe(true);
  });

  it('a denied request: 403 with the forbid decision and the Status', async () => {
    const cert = await userCert(t, 'mallory', ['interns']);
    const r = await t.request('POST', '/api/v1/namespaces/default/configmaps', { cert, body: { metadata: { name: 'nope' } } });
    expect(r.status).toBe(403);
    const id = r.headers['audit-id'] as string;
    const [, complete] = await eventsOf(id, 2);
    expect(complete).toMatchObject({
      stage: 'ResponseComplete',
      verb: 'create',
      user: { username: 'mallory', groups: ['interns', 'system:authenticated'] },
      objectRef: { resource: 'configmaps', namespace: 'default', name: 'nope', apiVersion: 'v1' },
      responseStatus: { metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403 },
      annotations: { 'authorization.orch.io/decision': 'forbid' },
    });
    expect(complete!.responseStatus.message).toMatch(/forbidden: User "mallory" cannot create resource "configmaps"/);
    expect(typeof complete!.annotations['authorization.orch.io/reason']).toBe('string');
    expect(complete!.impersonatedUser).toBeUndefined();
  });

  it('an impersonated request: user is the caller, impersonatedUser the one acted as', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps/audited', {
      headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'system:masters' },
    });
    expect(r.status).toBe(200);
    const id = r.headers['audit-id'] as string;
    const [received, complete] = await eventsOf(id, 2);
    expect(received!.user.username).toBe(ADMIN_COMMON_NAME);
    // impersonation is learned after RequestReceived, as in kube
    expect(received!.impersonatedUser).toBeUndefined();
    expect(complete).toMatchObject({
      verb: 'get',
      user: { username: ADMIN_COMMON_NAME },
      impersonatedUser: { username: 'alice', groups: ['system:masters', 'system:authenticated'] },
      objectRef: { resource: 'configmaps', namespace: 'default', name: 'audited' },
      responseStatus: { metadata: {}, code: 200 },
      annotations: { 'authorization.orch.io/decision': 'allow' },
    });
    expect(Object.keys(complete!).indexOf('impersonatedUser')).toBe(Object.keys(complete!).indexOf('user') + 1);
  });

  it('a failed authentication: one ResponseStarted event with kube\'s message', async () => {
    const r = await t.request('GET', '/api/v1/namespaces', { anonymous: true, headers: { Authorization: 'Bearer not-a-token' } });
    expect(r.status).toBe(401);
    const id = r.headers['audit-id'] as string;
    const [ev, ...rest] = await eventsOf(id, 1);
    expect(ev).toMatchObject({ stage: 'ResponseStarted', level: 'Metadata', verb: 'list', user: {}, responseStatus: { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 } });
    // a later request's events are written after any this one would still produce
    const later = await t.request('GET', '/version');
    await eventsOf(later.headers['audit-id'] as string, 2);
    expect(rest).toEqual([]);
    expect((await events()).filter((e) => e.auditID === id)).toHaveLength(1);
  });

  it('non-resource requests: Metadata without objectRef; level None writes nothing; Audit-Id always', async () => {
    const v = await t.request('GET', '/version', { headers: { 'Audit-ID': 'client-chosen-id' } });
    expect(v.headers['audit-id']).toBe('client-chosen-id');
    const [ev] = await eventsOf('client-chosen-id', 2);
    expect(ev).toMatchObject({ verb: 'get', level: 'Metadata', requestURI: '/version' });
    expect(ev!.objectRef).toBeUndefined();
    const h = await t.request('GET', '/healthz');
    expect(h.headers['audit-id']).toMatch(UUID);
    const m = await t.request('GET', '/metrics');
    expect((await events()).some((e) => e.auditID === h.headers['audit-id'])).toBe(false);
    expect(m.text).toMatch(/apiserver_audit_event_total \d+/);
    expect(m.text).toContain('apiserver_audit_level_total{level="None"}');
  });

  it('a deprecated endpoint annotates its event (spec 000 §6)', async () => {
    const lease = t.server.registry.lookup('coordination.orch.io', 'v1', 'leases')!;
    t.server.registry.add({ ...lease, version: 'v1beta1', deprecated: { deprecatedRelease: '1.19', removedRelease: '1.22' } });
    const r = await t.request('GET', '/apis/coordination.orch.io/v1beta1/namespaces/default/leases');
    expect(r.status).toBe(200);
    const [, complete] = await eventsOf(r.headers['audit-id'] as string, 2);
    expect(complete!.objectRef).toEqual({ resource: 'leases', namespace: 'default', apiGroup: 'coordination.orch.io', apiVersion: 'v1beta1' });
    expect(complete!.annotations).toMatchObject({ 'orch.io/deprecated': 'true', 'orch.io/removed-release': '1.22' });
  });

  it('kubectl as a user would run it: its create and get are in the log with its user agent', async () => {
    const before = (await events()).length;
    const c = await runKubectl(t.server.kubeconfigPath, ['create', 'configmap', 'from-kubectl', '-n', 'default', '--from-literal=a=b']);
    expect(c.code).toBe(0);
    const g = await runKubectl(t.server.kubeconfigPath, ['get', 'configmap', 'from-kubectl', '-n', 'default', '-o', 'name']);
    expect(g.stdout.trim()).toBe('configmap/from-kubectl');
    let mine: Ev[] = [];
    await eventually(async () => {
      mine = (await events()).slice(before).filter((e) => e.objectRef?.name === 'from-kubectl' && e.stage === 'ResponseComplete');
      return mine.length >= 2;
    }, `kubectl events: ${JSON.stringify((await events()).slice(before).map((e) => [e.verb, e.stage, e.objectRef, e.userAgent, e.responseStatus?.code, Boolean(e.requestObject)]))}`);
    const create = mine.find((e) => e.verb === 'create')!;
    expect(create.userAgent).toMatch(/^kubectl\//);
    expect(create.requestObject).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'from-kubectl' }, data: { a: 'b' } });
    expect(create.responseStatus).toEqual({ metadata: {}, code: 201 });
    expect(mine.find((e) => e.verb === 'get')!.responseObject).toMatchObject({ metadata: { name: 'from-kubectl' } });
  });

  it('a handler can annotate the event through ApiRequest.audit (admission decisions use it)', async () => {
    const lease = t.server.registry.lookup('coordination.orch.io', 'v1', 'leases')!;
    t.server.registry.add({
      ...lease,
      version: 'v1alpha9',
      handlers: {
        get: async (_ctx, req) => {
          req.audit?.annotate('example.com/checked', 'yes');
          return { status: 200, body: { apiVersion: 'coordination.orch.io/v1alpha9', kind: 'Lease', metadata: { name: req.info.name } } };
        },
      },
    });
    const r = await t.request('GET', '/apis/coordination.orch.io/v1alpha9/namespaces/default/leases/l1');
    expect(r.status).toBe(200);
    const [, complete] = await eventsOf(r.headers['audit-id'] as string, 2);
    expect(complete!.annotations).toMatchObject({ 'example.com/checked': 'yes', 'authorization.orch.io/decision': 'allow' });
  });
  it('a ValidatingAdmissionPolicy with the Audit action annotates the event of the request it judged', async () => {
    const admreg = '/apis/admissionregistration.orch.io/v1';
    const policy = {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'no-big-keys' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
        validations: [{ expression: "!has(object.data) || !('big' in object.data)", message: 'no key named big' }],
      },
    };
    const binding = {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'no-big-keys-audit' },
      spec: { policyName: 'no-big-keys', validationActions: ['Audit'] },
    };
    expect((await t.request('POST', `${admreg}/validatingadmissionpolicies`, { body: policy })).status).toBe(201);
    expect((await t.request('POST', `${admreg}/validatingadmissionpolicybindings`, { body: binding })).status).toBe(201);
    let r = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big-0' }, data: { big: '1' } } });
    // the policy takes effect through the applied feed: retry until the annotation shows
    let complete: Ev | undefined;
    for (let i = 1; i < 100; i++) {
      expect(r.status).toBe(201); // Audit alone never refuses
      const evs = await eventsOf(r.headers['audit-id'] as string, 2);
      complete = evs.find((e) => e.stage === 'ResponseComplete');
      if (complete?.annotations?.['validation.policy.admission.orch.io/validation_failure']) break;
      await new Promise((res) => setTimeout(res, 50));
      r = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { big: '1' } } });
    }
    const failures = JSON.parse(complete!.annotations!['validation.policy.admission.orch.io/validation_failure']!) as Record<string, unknown>[];
    expect(failures).toEqual([{ message: 'no key named big', policy: 'no-big-keys', binding: 'no-big-keys-audit', expressionIndex: 0, validationActions: ['Audit'] }]);
  });
});
