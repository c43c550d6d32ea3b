// kube's certificates/v1 validation of CertificateSigningRequests (spec 000's
// CSR row; pkg/apis/certificates/validation): the request parses and is
// signed, signerName is a qualified `domain/path` and not the legacy signer,
// usages are given, known and not repeated, expirationSeconds is at least
// 600, conditions have a type and a status and no type twice, Approved and
// Denied exclude each other, and a certificate is only CERTIFICATE blocks,
// never changed once issued. Data stored before a rule (an old object that
// already breaks it) keeps being accepted, as kube's validation options do.

import { X509Certificate } from 'node:crypto';
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/schema/object-meta.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { certificateRequestProblem } from './csr-request.js';
import { duplicate, forbidden, invalid, notSupported, required, tooLong } from './field-errors.js';

type Obj = Record<string, JSONValue>;

/** kube's allValidUsages */
export const KNOWN_USAGES: readonly string[] = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment', 'cert sign', 'crl sign',
  'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system',
  'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc',
];
const SORTED_USAGES = [...KNOWN_USAGES].sort();

interface Condition {
  type?: string;
  status?: string;
}

const spec = (o: ApiObject): Obj => (o.spec ?? {}) as Obj;
const conditions = (o: ApiObject | undefined): Condition[] => {
  const c = ((o?.status ?? {}) as Obj).conditions;
  return Array.isArray(c) ? (c as unknown as Condition[]) : [];
};
const certificate = (o: ApiObject | undefined): string => {
  const c = ((o?.status ?? {}) as Obj).certificate;
  return typeof c === 'string' ? c : '';
};

/** ValidateCertificateSigningRequestCreate; `legacySigner` is the domain's legacy-unknown signer name */
export function validateCsr(o: ApiObject, legacySigner: string, old?: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const s = spec(o);
  const request = typeof s.request === 'string' ? s.request : '';
  if (request === '') errs.push(required('spec.request'));
  else {
    const problem = certificateRequestProblem(Buffer.from(request, 'base64').toString('utf8'));
    if (problem) errs.push(invalid('spec.request', '<request data>', problem));
  }
  const usages = Array.isArray(s.usages) ? s.usages : [];
  if (usages.length === 0) errs.push(required('spec.usages', 'usages must be provided'));
  const oldUsages = old ? (Array.isArray(spec(old).usages) ? (spec(old).usages as JSONValue[]) : []) : [];
  if (!oldUsages.some((u) => !KNOWN_USAGES.includes(String(u)))) {
    usages.forEach((u, i) => {
      if (!KNOWN_USAGES.includes(String(u))) errs.push(notSupported(`spec.usages[${i}]`, u, SORTED_USAGES));
    });
  }
  if (new Set(oldUsages).size === oldUsages.length) {
    usages.forEach((u, i) => {
      if (usages.indexOf(u) < i) errs.push(duplicate(`spec.usages[${i}]`, u));
    });
  }
  const signerName = typeof s.signerName === 'string' ? s.signerName : '';
  if (signerName === legacySigner && (!old || spec(old).signerName !== legacySigner)) {
    errs.push(invalid('spec.signerName', signerName, 'the legacy signerName is not allowed via this API version'));
  } else errs.push(...signerNameErrors(signerName));
  if (typeof s.expirationSeconds === 'number' && s.expirationSeconds < 600) {
    errs.push(invalid('spec.expirationSeconds', s.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...conditionErrors(o, old));
  const cert = certificate(o);
  // kube's allowArbitraryCertificate: an unchanged, already stored certificate is not judged again
  if (cert !== '' && !(old && certificate(old) === cert)) {
    const problem = certificateProblem(Buffer.from(cert, 'base64').toString('utf8'));
    if (problem) errs.push(invalid('status.certificate', '<certificate data>', problem));
  }
  return errs;
}

/**
 * ValidateCertificateSigningRequestUpdate (status and approval): no condition removed, an issued
 * certificate kept, and outside `/approval` (`approval` false) no Approved or Denied condition added
 */
export function validateCsrUpdate(o: ApiObject, old: ApiObject, legacySigner: string, approval = false): FieldError[] {
  const errs = validateCsr(o, legacySigner, old);
  const count = (x: ApiObject, t: string) => conditions(x).filter((c) => c.type === t).length;
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (count(o, t) < count(old, t)) errs.push(forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
  }
  // a changed instance cannot reach here: the status strategy put the stored ones back (preserveConditionInstances)
  for (const t of approval ? [] : ['Approved', 'Denied']) {
    if (count(o, t) > count(old, t)) errs.push(forbidden('status.conditions', `updates may not add a condition of type "${t}"`));
  }
  if (certificate(old) !== '' && certificate(o) !== certificate(old)) errs.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
  return errs;
}

/** ValidateCertificateSigningRequestSignerName */
function signerNameErrors(name: string): FieldError[] {
  if (name === '') return [required('spec.signerName', 'signerName must be provided')];
  const segments = name.split('/');
  if (segments.length !== 2) return [invalid('spec.signerName', name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, path] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.length > 253) errs.push(tooLong('spec.signerName', 253));
  const labels = domain.split('.');
  for (const l of labels) {
    const bad = isDNS1123Label(l);
    if (bad.length > 0) {
      for (const m of bad) errs.push(invalid('spec.signerName', domain, `validating label ${JSON.stringify(l)}: ${m}`));
      break;
    }
  }
  if (labels.length < 2) errs.push(invalid('spec.signerName', domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of path.split('.')) {
    const bad = isDNS1123Subdomain(l);
    if (bad.length > 0) {
      for (const m of bad) errs.push(invalid('spec.signerName', path, `validating label ${JSON.stringify(l)}: ${m}`));
      break;
    }
  }
  if (name.length > 253 + 253 + 63 + 1 + 1) errs.push(tooLong('spec.signerName', 571));
  return errs;
}

/** validateConditions, with kube's allowances for data that already breaks a rule */
function conditionErrors(o: ApiObject, old: ApiObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const oldConds = conditions(old);
  const allowEmptyType = oldConds.some((c) => !c.type);
  const allowDuplicates = oldConds.some((c, i) => oldConds.findIndex((d) => d.type === c.type) < i);
  const allowBoth = oldConds.some((c) => c.type === 'Approved') && oldConds.some((c) => c.type === 'Denied');
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions(o).forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    if (!c.type && !allowEmptyType) errs.push(required(`${at}.type`));
    const allowed = c.type === 'Approved' || c.type === 'Denied' ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(required(`${at}.status`));
    else if (!allowed.includes(c.status)) errs.push(notSupported(`${at}.status`, c.status, allowed));
    if (!allowBoth) {
      if (c.type === 'Approved') {
        approved = true;
        if (denied) errs.push(invalid(`${at}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (c.type === 'Denied') {
        denied = true;
        if (approved) errs.push(invalid(`${at}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!allowDuplicates && seen.has(c.type ?? '')) errs.push(duplicate(`${at}.type`, c.type ?? ''));
    seen.add(c.type ?? '');
  });
  return errs;
}

/** validateCertificate: one or more CERTIFICATE blocks, no headers, each a certificate */
function certificateProblem(text: string): string {
  const re = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  let blocks = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[1] !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(m[1])}`;
    if (/^[\w-]+:/m.test(m[2]!)) return 'no PEM block headers are permitted';
    blocks++;
    try {
      new X509Certificate(Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64'));
    } catch {
      return 'x509: malformed certificate';
    }
  }
  return blocks === 0 ? 'must contain at least one CERTIFICATE PEM block' : '';
}

/**
 * kube's populateConditionTimestamps (status and approval updates): a
 * condition without lastUpdateTime gets now; without lastTransitionTime,
 * the old condition's of the same type and status, else now. A condition
 * without status is True (certificates/v1 defaulting).
 */
export function populateConditionTimestamps(o: ApiObject, old: ApiObject | undefined, now: string): void {
  const oldConds = conditions(old) as (Condition & { lastTransitionTime?: string })[];
  for (const c of conditions(o) as (Condition & { lastUpdateTime?: string; lastTransitionTime?: string })[]) {
    if (!c.status) c.status = 'True';
    c.lastUpdateTime ||= now;
    if (!c.lastTransitionTime) {
      c.lastTransitionTime = oldConds.find((p) => p.type === c.type && p.status === c.status && p.lastTransitionTime)?.lastTransitionTime ?? now;
    }
  }
}
