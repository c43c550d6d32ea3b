// The built-in signers' rules and the certificates they issue (spec 001 §5.3;
// kube's pkg/controller/certificates/signer and pkg/apis/certificates helpers).

import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signerNamesOf } from '../../src/core/product-names.js';
import { createCertificateRequest } from '../../src/core/x509.js';
import { type Pki, ensurePki } from '../../src/server/pki.js';
import { certificateRequestProblem } from '../../src/registry/kinds/csr-request.js';
import {
  DEFAULT_SIGNING_DURATION_MS, certificateDuration, judgeRequest, parseCsr, signRequest,
} from '../../src/controllers/certificates/signer.js';

let dir: string;
let pki: Pki;
const NOW = Date.parse('2026-11-28T12:00:00Z');
const names = signerNamesOf('orch.io');
const CLIENT = ['digital signature', 'client auth'];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-csr-'));
  pki = await ensurePki(dir, { now: NOW });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const req = async (p: Parameters<typeof createCertificateRequest>[0], rsa = false) => parseCsr((await createCertificateRequest(p, rsa ? 'rsa' : undefined)).csrPem);

describe('signer names', () => {
  it('are kube\'s under k8s.io and the product domain\'s otherwise', () => {
    expect(signerNamesOf('k8s.io')).toEqual({
      apiServerClient: 'kubernetes.io/kube-apiserver-client',
      kubeletClient: 'kubernetes.io/kube-apiserver-client-kubelet',
      kubeletServing: 'kubernetes.io/kubelet-serving',
      legacyUnknown: 'kubernetes.io/legacy-unknown',
    });
    expect(names.apiServerClient).toBe('orch.io/orch-apiserver-client');
    expect(names.kubeletClient).toBe('orch.io/orch-apiserver-client-kubelet');
  });
});

describe('per-signer rules', () => {
  it('kubelet client: O=system:nodes, CN=system:node:<name>, no SANs, exactly kube\'s usages', async () => {
    const ok = await req({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    expect(judgeRequest(names, names.kubeletClient, ok, CLIENT)).toEqual({ kind: 'sign' });
    expect(judgeRequest(names, names.kubeletClient, ok, ['key encipherment', 'digital signature', 'client auth'])).toEqual({ kind: 'sign' });
    const invalid = (r: Awaited<ReturnType<typeof req>>, usages: string[]) => judgeRequest(names, names.kubeletClient, r, usages);
    expect(invalid(ok, ['client auth'])).toEqual({ kind: 'invalid', message: 'usages did not match [client auth digital signature key encipherment]' });
    expect(invalid(ok, [...CLIENT, 'server auth'])).toMatchObject({ kind: 'invalid' });
    expect(invalid(await req({ commonName: 'system:node:n1', organizations: ['system:masters'] }), CLIENT)).toEqual({ kind: 'invalid', message: 'subject organization is not system:nodes' });
    expect(invalid(await req({ commonName: 'system:node:n1', organizations: ['system:nodes', 'x'] }), CLIENT)).toEqual({ kind: 'invalid', message: 'subject organization is not system:nodes' });
    expect(invalid(await req({ commonName: 'alice', organizations: ['system:nodes'] }), CLIENT)).toEqual({ kind: 'invalid', message: 'subject common name does not begin with system:node:' });
    expect(invalid(await req({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'] }), CLIENT)).toEqual({ kind: 'invalid', message: 'DNS subjectAltNames are not allowed' });
    expect(invalid(await req({ commonName: 'system:node:n1', organizations: ['system:nodes'], ipAddresses: ['10.0.0.1'] }), CLIENT)).toEqual({ kind: 'invalid', message: 'IP subjectAltNames are not allowed' });
    expect(invalid(await req({ commonName: 'system:node:n1', organizations: ['system:nodes'], emailAddresses: ['a@b.c'] }), CLIENT)).toEqual({ kind: 'invalid', message: 'Email subjectAltNames are not allowed' });
  });

  it('kubelet serving: a DNS or IP SAN and server auth are required', async () => {
    const serving = ['digital signature', 'server auth'];
    const ok = await req({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1.example'], ipAddresses: ['10.0.0.1'] });
    expect(judgeRequest(names, names.kubeletServing, ok, serving)).toEqual({ kind: 'sign' });
    expect(judgeRequest(names, names.kubeletServing, ok, CLIENT)).toEqual({ kind: 'invalid', message: 'usages did not match [digital signature key encipherment server auth]' });
    const noSan = await req({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    expect(judgeRequest(names, names.kubeletServing, noSan, serving)).toEqual({ kind: 'invalid', message: 'DNS or IP subjectAltName is required' });
  });

  it('API server client: client auth required, only signing usages besides; any subject', async () => {
    const r = await req({ commonName: 'alice', organizations: ['devs'] });
    expect(judgeRequest(names, names.apiServerClient, r, ['client auth'])).toEqual({ kind: 'sign' });
    expect(judgeRequest(names, names.apiServerClient, r, ['digital signature', 'key encipherment', 'client auth'])).toEqual({ kind: 'sign' });
    expect(judgeRequest(names, names.apiServerClient, r, ['digital signature'])).toEqual({ kind: 'invalid', message: 'missing required usage for client certificate: client auth' });
    expect(judgeRequest(names, names.apiServerClient, r, ['client auth', 'server auth'])).toEqual({ kind: 'invalid', message: 'invalid usage for client certificate: server auth' });
  });

  it('legacy-unknown has no rules; other signers and kube\'s names under another domain are not ours', async () => {
    const r = await req({ commonName: 'x' });
    expect(judgeRequest(names, names.legacyUnknown, r, ['server auth'])).toEqual({ kind: 'sign' });
    expect(judgeRequest(names, 'example.com/mine', r, CLIENT)).toEqual({ kind: 'not-ours' });
    expect(judgeRequest(names, 'kubernetes.io/kube-apiserver-client', r, CLIENT)).toEqual({ kind: 'not-ours' });
  });

  it('a request that is not a CERTIFICATE REQUEST PEM is refused with kube\'s message', async () => {
    await expect(parseCsr(pki.ca.certPem)).rejects.toThrow('PEM block type must be CERTIFICATE REQUEST');
    await expect(parseCsr('junk')).rejects.toThrow('PEM block type must be CERTIFICATE REQUEST');
  });
});

describe('expiration', () => {
  it('the requested duration, capped by the signing duration, at least 10 minutes', () => {
    expect(certificateDuration(undefined, DEFAULT_SIGNING_DURATION_MS)).toBe(365 * 24 * 3600_000);
    expect(certificateDuration(3600, DEFAULT_SIGNING_DURATION_MS)).toBe(3600_000);
    expect(certificateDuration(600, DEFAULT_SIGNING_DURATION_MS)).toBe(600_000);
    expect(certificateDuration(60, DEFAULT_SIGNING_DURATION_MS)).toBe(600_000);
    expect(certificateDuration(10 * 365 * 86400, 7200_000)).toBe(7200_000);
  });
});

describe('issued certificates', () => {
  it('verify against the CA with the request\'s subject, key, usages and SANs; backdated 5 minutes', async () => {
    const { csrPem } = await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1.example'], ipAddresses: ['10.0.0.7'] });
    const r = await parseCsr(csrPem);
    const pem = await signRequest(pki.ca, r, { usages: ['digital signature', 'server auth'], durationMs: 3600_000, now: NOW });
    const cert = new X509Certificate(pem);
    const ca = new X509Certificate(pki.ca.certPem);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subject).toBe('CN=system:node:n1\nO=system:nodes');
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(cert.subjectAltName).toBe('DNS:n1.example, IP Address:10.0.0.7');
    expect(Date.parse(cert.validFrom)).toBe(NOW - 5 * 60_000);
    // shorter than 8 h: the end is not backdated
    expect(Date.parse(cert.validTo)).toBe(NOW + 3600_000);
    expect(Buffer.from(r.req.publicKey.rawData).equals(cert.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
  });

  it('a long certificate ends 5 minutes early and never after the CA; an RSA request keeps its subject', async () => {
    const r = await req({ commonName: 'alice', organizations: ['devs', 'qa'] }, true);
    const pem = await signRequest(pki.ca, r, { usages: ['digital signature', 'key encipherment', 'client auth'], durationMs: 24 * 3600_000, now: NOW });
    const cert = new X509Certificate(pem);
    expect(Date.parse(cert.validTo)).toBe(NOW + 24 * 3600_000 - 5 * 60_000);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.subject).toBe('CN=alice\nO=devs\nO=qa');
    const ca = new X509Certificate(pki.ca.certPem);
    const capped = new X509Certificate(await signRequest(pki.ca, r, { usages: ['client auth'], durationMs: 20 * 365 * 86400_000, now: NOW }));
    expect(capped.validTo).toBe(ca.validTo);
  });

  it('a request whose signature does not verify is not signed', async () => {
    const a = await createCertificateRequest({ commonName: 'a' });
    const der = Buffer.from(a.csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[der.length - 5]! ^= 0xff; // inside the signature
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    await expect(signRequest(pki.ca, await parseCsr(bad), { usages: ['client auth'], durationMs: 3600_000, now: NOW })).rejects.toThrow('unable to verify certificate request signature');
  });
});

describe('certificates/v1 request validation (csr-request.ts)', () => {
  it('accepts ECDSA and RSA requests and refuses a tampered signature, another PEM type and junk DER', async () => {
    const ec = await createCertificateRequest({ commonName: 'a', organizations: ['b'] });
    expect(certificateRequestProblem(ec.csrPem)).toBe('');
    expect(certificateRequestProblem((await createCertificateRequest({ commonName: 'r' }, 'rsa')).csrPem)).toBe('');
    const der = Buffer.from(ec.csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[der.length - 5]! ^= 0xff;
    expect(certificateRequestProblem(`-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`)).toBe('x509: ECDSA verification failure');
    expect(certificateRequestProblem(pki.ca.certPem)).toBe('PEM block type must be CERTIFICATE REQUEST');
    expect(certificateRequestProblem('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n')).toBe('asn1: structure error: malformed certificate request');
  });
});
