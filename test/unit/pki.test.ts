// PKI bootstrap (src/server/pki.ts): CA, serving and admin certificates for
// client-certificate authentication (spec 001_bdb487117be0ea8a.txt §5.3).
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureFrontProxyPki, ensurePki, issueClientCertificate, loadPki } from '../../src/server/pki.js';

let base: string;
let dir: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'orch-pki-'));
  dir = join(base, 'pki');
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const FILES = ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt', 'admin.key'];

function keyMatches(certPem: string, keyPem: string): boolean {
  const a = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
  const b = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return a.equals(b);
}

describe('ensurePki', () => {
  it('creates CA, serving and admin certificates with private files', async () => {
    const pki = await ensurePki(dir, { hosts: ['localhost', '127.0.0.1', '::1', 'orch.example'] });
    for (const f of FILES) {
      const st = await stat(join(dir, f));
      expect(st.mode & 0o777, f).toBe(0o600);
    }
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(pki.ca.certPem);
    expect(pki.ca.keyPem).toContain('-----BEGIN PRIVATE KEY-----'); // PKCS#8

    const ca = new X509Certificate(pki.ca.certPem);
    expect(ca.ca).toBe(true);
    expect(ca.checkIssued(ca)).toBe(true);
    // CA lives ~10 years, leaves ~1 year
    const years = (c: X509Certificate) => (Date.parse(c.validTo) - Date.parse(c.validFrom)) / (365 * 86400_000);
    expect(years(ca)).toBeGreaterThan(9.9);

    const serving = new X509Certificate(pki.serving.certPem);
    expect(serving.ca).toBe(false);
    expect(serving.checkIssued(ca)).toBe(true);
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(years(serving)).toBeGreaterThan(0.99);
    expect(years(serving)).toBeLessThan(1.01);
    expect(serving.checkHost('localhost', { subject: 'never' })).toBe('localhost');
    expect(serving.checkHost('orch.example', { subject: 'never' })).toBe('orch.example');
    expect(serving.checkHost('other.example', { subject: 'never' })).toBeUndefined();
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(serving.checkIP('::1')).toBe('::1');
    expect(serving.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // serverAuth
    expect(keyMatches(pki.serving.certPem, pki.serving.keyPem)).toBe(true);

    const admin = new X509Certificate(pki.admin.certPem);
    expect(admin.subject).toBe('CN=orch-admin\nO=system:masters');
    expect(admin.checkIssued(ca)).toBe(true);
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(admin.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth
    expect(keyMatches(pki.admin.certPem, pki.admin.keyPem)).toBe(true);
  });

  it('reuses everything on a second call and loadPki reads the same', async () => {
    const first = await ensurePki(dir, { hosts: ['localhost'] });
    const second = await ensurePki(dir, { hosts: ['localhost'] });
    expect(second.ca).toEqual(first.ca);
    expect(second.serving).toEqual(first.serving);
    expect(second.admin).toEqual(first.admin);
    const loaded = await loadPki(dir);
    expect(loaded.ca.certPem).toBe(first.ca.certPem);
    expect(loaded.admin.keyPem).toBe(first.admin.keyPem);
  });

  it('defaults the serving hosts to localhost, 127.0.0.1 and ::1', async () => {
    const pki = await ensurePki(dir, {});
    const serving = new X509Certificate(pki.serving.certPem);
    expect(serving.subjectAltName).toContain('DNS:localhost');
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(serving.checkIP('::1')).toBe('::1');
  });

  it('reissues the serving certificate (same CA) when a newly requested host is missing', async () => {
    const first = await ensurePki(dir, { hosts: ['localhost', '127.0.0.1'] });
    const second = await ensurePki(dir, { hosts: ['localhost', '127.0.0.1', '10.1.2.3'] });
    expect(second.ca.certPem).toBe(first.ca.certPem);
    expect(second.admin.certPem).toBe(first.admin.certPem);
    expect(second.serving.certPem).not.toBe(first.serving.certPem);
    const serving = new X509Certificate(second.serving.certPem);
    expect(serving.checkIP('10.1.2.3')).toBe('10.1.2.3');
    expect(serving.checkIssued(new X509Certificate(second.ca.certPem))).toBe(true);
    // what ensurePki returns is what it wrote
    expect(await readFile(join(dir, 'apiserver.crt'), 'utf8')).toBe(second.serving.certPem);
  });

  it('repairs a leaf whose key no longer matches its certificate', async () => {
    const first = await ensurePki(dir, {});
    const other = await issueClientCertificate(first, { commonName: 'x' });
    await writeFile(join(dir, 'admin.key'), other.keyPem, { mode: 0o600 });
    const second = await ensurePki(dir, {});
    expect(second.ca.certPem).toBe(first.ca.certPem);
    expect(keyMatches(second.admin.certPem, second.admin.keyPem)).toBe(true);
  });

  it('creates a new CA and new leaves when the CA is gone', async () => {
    const first = await ensurePki(dir, {});
    await unlink(join(dir, 'ca.key'));
    const second = await ensurePki(dir, {});
    expect(second.ca.certPem).not.toBe(first.ca.certPem);
    const ca = new X509Certificate(second.ca.certPem);
    expect(new X509Certificate(second.admin.certPem).checkIssued(ca)).toBe(true);
    expect(new X509Certificate(second.serving.certPem).verify(ca.publicKey)).toBe(true);
  });

  it('loadPki fails on an empty directory', async () => {
    await expect(loadPki(dir)).rejects.toThrow(/incomplete PKI/);
  });
});

describe('issueClientCertificate', () => {
  it('issues a clientAuth certificate with CN and O in order, signed by the CA', async () => {
    const pki = await ensurePki(dir, {});
    const issued = await issueClientCertificate(pki, {
      commonName: 'jane',
      organizations: ['dev', 'system:nodes', 'ops'],
      days: 2,
    });
    const cert = new X509Certificate(issued.certPem);
    expect(cert.subject).toBe('CN=jane\nO=dev\nO=system:nodes\nO=ops');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    const ca = new X509Certificate(pki.ca.certPem);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86400_000;
    expect(days).toBeCloseTo(2, 5);
    expect(keyMatches(issued.certPem, issued.keyPem)).toBe(true);
  });

  it('rejects an empty common name', async () => {
    const pki = await ensurePki(dir, {});
    await expect(issueClientCertificate(pki, { commonName: '' })).rejects.toThrow(/common name/);
  });
});

describe('ensureFrontProxyPki', () => {
  it('members starting together on one directory get one CA and a client certificate it signed', async () => {
    await ensurePki(dir);
    // the members of an in-process cluster (test/cluster) start at once on a shared PKI directory
    const all = await Promise.all([1, 2, 3].map(() => ensureFrontProxyPki(dir, Date.now())));
    const caPem = await readFile(join(dir, 'front-proxy-ca.crt'), 'utf8');
    for (const fp of all) {
      expect(fp.ca.certPem).toBe(caPem);
      expect(new X509Certificate(fp.client.certPem).verify(new X509Certificate(caPem).publicKey)).toBe(true);
      expect(keyMatches(fp.client.certPem, fp.client.keyPem)).toBe(true);
    }
    // a later start reads what was made
    const again = await ensureFrontProxyPki(dir, Date.now());
    expect(again.ca.certPem).toBe(caPem);
    expect(again.client.certPem).toBe(all[0]!.client.certPem);
  });
});
