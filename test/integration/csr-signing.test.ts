// CertificateSigningRequests signed and auto-approved (spec 001 §5.3/§5.4,
// spec 000's CSR row): `kubectl certificate approve` leads to
// status.certificate, and that certificate logs in as its subject; a request
// breaking its signer's rules is Failed; a bootstrap token's node client
// request is approved and issued by the controllers, a random user's is not.

import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateRequest } from '../../src/core/x509.js';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { join } from 'node:path';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';
import { eventually } from '../helpers/eventually.js';

let t: TestServer;
const CERTS = 'certificates.k8s.io';
const CSRS = `/apis/${CERTS}/v1/certificatesigningrequests`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io', authn: { enableBootstrapTokenAuth: true } });
});
afterAll(async () => {
  await t?.stop();
});

type Csr = { metadata: { name: string }; spec: Record<string, unknown>; status?: { certificate?: string; conditions?: { type: string; reason?: string; message?: string; status?: string }[] } };

const until = <T>(f: () => Promise<T>, what: string) => eventually(f, what, { timeoutMs: 15_000 });

const getCsr = async (name: string): Promise<Csr> => (await t.request('GET', `${CSRS}/${name}`)).json<Csr>();
const issued = (name: string) => until(async () => {
  const c = await getCsr(name);
  return c.status?.certificate ? Buffer.from(c.status.certificate, 'base64').toString('utf8') : undefined;
}, `${name} issued`);

async function postCsr(name: string, signerName: string, req: string, usages: string[], extra: Record<string, unknown> = {}, auth: { headers?: Record<string, string>; cert?: { certPem: string; keyPem: string }; anonymous?: boolean } = {}) {
  return t.request('POST', CSRS, {
    ...auth,
    body: { apiVersion: `${CERTS}/v1`, kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: Buffer.from(req).toString('base64'), signerName, usages, ...extra } },
  });
}

const whoami = (cert: { certPem: string; keyPem: string }) =>
  t.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert, body: { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1' } });

describe('csrsigning', () => {
  it('kubectl certificate approve leads to a certificate that authenticates as its subject', async () => {
    const { csrPem, keyPem } = await createCertificateRequest({ commonName: 'grace', organizations: ['qa', 'ops'] });
    expect((await postCsr('grace', 'kubernetes.io/kube-apiserver-client', csrPem, ['client auth'], { expirationSeconds: 3600 })).status).toBe(201);
    // not approved: nothing is signed
    expect((await getCsr('grace')).status?.certificate).toBeUndefined();
    const r = await kubectl('certificate', 'approve', 'grace');
    expect(r.code, r.stderr).toBe(0);
    const certPem = await issued('grace');
    const cert = new X509Certificate(certPem);
    expect(cert.checkIssued(new X509Certificate(t.server.caPem))).toBe(true);
    // expirationSeconds honoured: an hour, plus the five minutes of backdating
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(3600_000 + 300_000);
    const review = await whoami({ certPem, keyPem });
    expect(review.status, review.text).toBe(201);
    expect(review.json<{ status: { userInfo: { username: string; groups: string[] } } }>().status.userInfo).toMatchObject({ username: 'grace', groups: ['qa', 'ops', 'system:authenticated'] });
    const table = await kubectl('get', 'csr', 'grace', '--no-headers');
    expect(table.stdout).toContain('Approved,Issued');
  });

  it('a request breaking its signer\'s rules is marked Failed (SignerValidationFailure) and not signed', async () => {
    const { csrPem } = await createCertificateRequest({ commonName: 'system:node:n9', organizations: ['system:masters'] });
    expect((await postCsr('bad-node', 'kubernetes.io/kube-apiserver-client-kubelet', csrPem, ['digital signature', 'client auth'])).status).toBe(201);
    expect((await kubectl('certificate', 'approve', 'bad-node')).code).toBe(0);
    const failed = await until(async () => (await getCsr('bad-node')).status?.conditions?.find((c) => c.type === 'Failed'), 'Failed condition');
    expect(failed).toMatchObject({ status: 'True', reason: 'SignerValidationFailure', message: 'subject organization is not system:nodes' });
    expect((await getCsr('bad-node')).status?.certificate).toBeUndefined();
    const table = await kubectl('get', 'csr', 'bad-node', '--no-headers');
    expect(table.stdout).toContain('Approved,Failed');
  });

  it('CertificateSubjectRestriction: no system:masters through the API server client signer', async () => {
    const { csrPem } = await createCertificateRequest({ commonName: 'root', organizations: ['dev', 'system:masters'] });
    const r = await postCsr('root', 'kubernetes.io/kube-apiserver-client', csrPem, ['client auth']);
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string }>().message).toBe('certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
    // other signers are not restricted (kube's plugin looks only at the client signer)
    expect((await postCsr('root-other', 'example.com/signer', csrPem, ['client auth'])).status).toBe(201);
  });

  it('CertificateApproval: approving needs `approve` on the request\'s signer', async () => {
    const { csrPem } = await createCertificateRequest({ commonName: 'heidi' });
    expect((await postCsr('heidi', 'kubernetes.io/kube-apiserver-client', csrPem, ['client auth'])).status).toBe(201);
    // trent may update approvals, but approve for no signer yet
    const role = await t.request('POST', `${RBAC}/clusterroles`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'csr-approval-updater' }, rules: [{ apiGroups: [CERTS], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval'], verbs: ['get', 'update'] }] } });
    expect(role.status, role.text).toBe(201);
    const bind = async (name: string, roleName: string) => {
      const r = await t.request('POST', `${RBAC}/clusterrolebindings`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'trent' }] } });
      expect(r.status, r.text).toBe(201);
    };
    await bind('trent-updates', 'csr-approval-updater');
    const trent = await issueClientCertificate(await loadPki(join(t.dataDir, 'pki')), { commonName: 'trent' });
    const approve = async () => {
      const cur = await getCsr('heidi');
      return t.request('PUT', `${CSRS}/heidi/approval`, { cert: trent, body: { ...cur, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Trent' }] } } });
    };
    const refused = await approve();
    expect(refused.status, refused.text).toBe(403);
    expect(refused.json<{ message: string }>().message).toBe('certificatesigningrequests.certificates.k8s.io "heidi" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"');
    // kube's per-signer approver role lets it through
    await bind('trent-approves-clients', 'system:certificates.k8s.io:kube-apiserver-client-approver');
    const ok = await approve();
    expect(ok.status, ok.text).toBe(200);
    await issued('heidi');
  });

  it('CertificateSigning: writing a certificate through /status needs `sign` on the request\'s signer', async () => {
    const { csrPem } = await createCertificateRequest({ commonName: 'judy' });
    expect((await postCsr('judy', 'example.com/ext-signer', csrPem, ['client auth'])).status).toBe(201);
    expect((await kubectl('certificate', 'approve', 'judy')).code).toBe(0);
    const pki = await loadPki(join(t.dataDir, 'pki'));
    const sam = await issueClientCertificate(pki, { commonName: 'sam' });
    const issuedPem = (await issueClientCertificate(pki, { commonName: 'judy' })).certPem;
    const rules = (extra: object[]) => [{ apiGroups: [CERTS], resources: ['certificatesigningrequests', 'certificatesigningrequests/status'], verbs: ['get', 'update'] }, ...extra];
    const role = (name: string, extra: object[]) => t.request('POST', `${RBAC}/clusterroles`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: rules(extra) } });
    const bindSam = (name: string) => t.request('POST', `${RBAC}/clusterrolebindings`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'sam' }] } });
    expect((await role('sam-status', [])).status).toBe(201);
    expect((await bindSam('sam-status')).status).toBe(201);
    const sign = async () => {
      const cur = await getCsr('judy');
      return t.request('PUT', `${CSRS}/judy/status`, { cert: sam, body: { ...cur, status: { ...cur.status, certificate: Buffer.from(issuedPem).toString('base64') } } });
    };
    const refused = await sign();
    expect(refused.status, refused.text).toBe(403);
    expect(refused.json<{ message: string }>().message).toBe('certificatesigningrequests.certificates.k8s.io "judy" is forbidden: user not permitted to sign requests with signerName "example.com/ext-signer"');
    expect((await getCsr('judy')).status?.certificate).toBeUndefined();
    // `sign` on the signer's domain wildcard, as kube's IsAuthorizedForSignerName accepts
    expect((await role('sam-signs', [{ apiGroups: [CERTS], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['sign'] }])).status).toBe(201);
    expect((await bindSam('sam-signs')).status).toBe(201);
    const ok = await sign();
    expect(ok.status, ok.text).toBe(200);
    expect(Buffer.from(ok.json<Csr>().status!.certificate!, 'base64').toString()).toBe(issuedPem);
  });

  it('approval and issuance stay apart: /status cannot approve, /approval cannot write a certificate', async () => {
    const { csrPem } = await createCertificateRequest({ commonName: 'ivan' });
    expect((await postCsr('ivan', 'example.com/other-signer', csrPem, ['client auth'])).status).toBe(201);
    const cur = await getCsr('ivan');
    // an Approved condition through /status is refused (kube's ValidateCertificateSigningRequestStatusUpdate)
    const viaStatus = await t.request('PUT', `${CSRS}/ivan/status`, { body: { ...cur, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Sneaky' }] } } });
    expect(viaStatus.status, viaStatus.text).toBe(422);
    expect(viaStatus.json<{ message: string }>().message).toContain('status.conditions: Forbidden: updates may not add a condition of type "Approved"');
    // the main resource ignores status (kube's csrStrategy keeps the stored one), so nothing is added or refused
    const viaMain = await t.request('PUT', `${CSRS}/ivan`, { body: { ...cur, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Sneaky' }] } } });
    expect(viaMain.status, viaMain.text).toBe(200);
    expect(viaMain.json<Csr>().status?.conditions ?? []).toEqual([]);
    // a certificate through /approval is dropped (kube's csrApprovalStrategy changes only the conditions)
    const cert = Buffer.from('-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n').toString('base64');
    const viaApproval = await t.request('PUT', `${CSRS}/ivan/approval`, { body: { ...(await getCsr('ivan')), status: { certificate: cert, conditions: [{ type: 'Approved', status: 'True', reason: 'Admin' }] } } });
    expect(viaApproval.status, viaApproval.text).toBe(200);
    const approved = viaApproval.json<Csr>();
    expect(approved.status?.certificate).toBeUndefined();
    expect(approved.status?.conditions?.map((c) => c.type)).toEqual(['Approved']);
    // /status may not drop that approval, nor change it: the stored one stays where the written one stands
    const dropped = await t.request('PUT', `${CSRS}/ivan/status`, { body: { ...approved, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'Nope' }] } } });
    expect(dropped.status, dropped.text).toBe(422);
    expect(dropped.json<{ message: string }>().message).toContain('updates may not remove a condition of type "Approved"');
    const conditions = [{ type: 'Failed', status: 'True', reason: 'Nope' }, { ...approved.status!.conditions![0]!, reason: 'Rewritten' }];
    const failed = await t.request('PUT', `${CSRS}/ivan/status`, { body: { ...approved, status: { conditions } } });
    expect(failed.status, failed.text).toBe(200);
    expect(failed.json<Csr>().status?.conditions?.map((c) => [c.type, c.reason])).toEqual([['Failed', 'Nope'], ['Approved', 'Admin']]);
  });

  it('certificates/v1 validation: legacy signer, usages, expirationSeconds, request', async () => {
    const { csrPem } = await createCertificateRequest({ commonName: 'v' });
    const causes = async (r: Awaited<ReturnType<typeof postCsr>>) => {
      expect(r.status, r.text).toBe(422);
      return r.json<{ details: { causes: { field: string; message: string }[] } }>().details.causes.map((c) => `${c.field}: ${c.message}`);
    };
    expect(await causes(await postCsr('v1', 'kubernetes.io/legacy-unknown', csrPem, ['client auth']))).toEqual(['spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version']);
    expect(await causes(await postCsr('v2', 'example.com/x', csrPem, ['client auth', 'client auth', 'nope'], { expirationSeconds: 599 }))).toEqual([
      expect.stringMatching(/^spec\.usages\[2\]: Unsupported value: "nope": supported values: "any", "cert sign",/),
      'spec.usages[1]: Duplicate value: "client auth"',
      'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
    ]);
    expect(await causes(await postCsr('v3', 'example.com/x', 'not a pem', ['client auth']))).toEqual(['spec.request: Invalid value: "<request data>": PEM block type must be CERTIFICATE REQUEST']);
    expect(await causes(await postCsr('v4', 'signer', csrPem, []))).toEqual([
      'spec.usages: Required value: usages must be provided',
      'spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
    ]);
  });
});

describe('csrapproving', () => {
  const KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
  const USAGES = ['digital signature', 'client auth'];

  it('a bootstrap token\'s node client request is approved and issued; a random user\'s is not', async () => {
    // a bootstrap token, and kubeadm's bindings for its group
    const secret = await t.request('POST', '/api/v1/namespaces/kube-system/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bootstrap-token-abcdef' }, type: 'bootstrap.kubernetes.io/token', stringData: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' } },
    });
    expect(secret.status, secret.text).toBe(201);
    const bind = async (name: string, role: string, subject: Record<string, string>) => {
      const r = await t.request('POST', `${RBAC}/clusterrolebindings`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [subject] } });
      expect(r.status, r.text).toBe(201);
    };
    const bootstrappers = { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:bootstrappers' };
    await bind('bootstrap-csr', 'system:node-bootstrapper', bootstrappers);
    await bind('bootstrap-approve', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', bootstrappers);
    // a user who may create requests but not have node client ones approved
    const mallory = { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'mallory' };
    await bind('mallory-csr', 'system:node-bootstrapper', mallory);
    const pki = await loadPki(join(t.dataDir, 'pki'));
    const malloryCert = await issueClientCertificate(pki, { commonName: 'mallory' });

    const evil = await createCertificateRequest({ commonName: 'system:node:evil', organizations: ['system:nodes'] });
    expect((await postCsr('evil', KUBELET, evil.csrPem, USAGES, {}, { cert: malloryCert })).status).toBe(201);
    const node = await createCertificateRequest({ commonName: 'system:node:worker-1', organizations: ['system:nodes'] });
    const created = await postCsr('worker-1', KUBELET, node.csrPem, USAGES, {}, { anonymous: true, headers: { Authorization: 'Bearer abcdef.0123456789abcdef' } });
    expect(created.status, created.text).toBe(201);
    expect(created.json<Csr>().spec.username).toBe('system:bootstrap:abcdef');

    const certPem = await issued('worker-1');
    expect((await getCsr('worker-1')).status?.conditions).toEqual([
      expect.objectContaining({ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' }),
    ]);
    const review = await whoami({ certPem, keyPem: node.keyPem });
    expect(review.json<{ status: { userInfo: unknown } }>().status.userInfo).toMatchObject({ username: 'system:node:worker-1', groups: ['system:nodes', 'system:authenticated'] });
    // mallory's request was queued first and looked at already: still pending
    expect((await getCsr('evil')).status?.conditions ?? []).toEqual([]);
  });

  it('a node renewing its own client certificate is approved through selfnodeclient', async () => {
    const nodes = { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:nodes' };
    const r = await t.request('POST', `${RBAC}/clusterrolebindings`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'node-renewal' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient' }, subjects: [nodes] } });
    expect(r.status, r.text).toBe(201);
    const pki = await loadPki(join(t.dataDir, 'pki'));
    const nodeCert = await issueClientCertificate(pki, { commonName: 'system:node:worker-2', organizations: ['system:nodes'] });
    // another node's name is not a renewal: not approved
    const other = await createCertificateRequest({ commonName: 'system:node:worker-3', organizations: ['system:nodes'] });
    expect((await postCsr('worker-3-by-2', KUBELET, other.csrPem, USAGES, {}, { cert: nodeCert })).status).toBe(201);
    const own = await createCertificateRequest({ commonName: 'system:node:worker-2', organizations: ['system:nodes'] });
    expect((await postCsr('worker-2-renew', KUBELET, own.csrPem, USAGES, {}, { cert: nodeCert })).status).toBe(201);
    await issued('worker-2-renew');
    expect((await getCsr('worker-2-renew')).status?.conditions?.[0]).toMatchObject({ reason: 'AutoApproved', message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' });
    expect((await getCsr('worker-3-by-2')).status?.conditions ?? []).toEqual([]);
  });
});
