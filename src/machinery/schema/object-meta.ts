// Object metadata rules (spec 000 §2.1) with the messages Kubernetes prints,
// since they are what users read: name syntax per kind, namespace presence,
// label and annotation syntax, annotation size, finalizer names, owner refs.

import type { FieldError, NameValidation, ObjectMeta } from '../../core/object.js';
import { badValue } from './value-text.js';

export interface ObjectMetaRules {
  namespaced: boolean;
  /** shorthand for `nameValidation: 'DNS1123Label'` (namespaces) */
  nameIsDNSLabel?: boolean;
  nameValidation?: NameValidation;
  /** extra single-word finalizer names accepted besides orphan/foregroundDeletion */
  standardFinalizers?: readonly string[];
}

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

/** Kubernetes' validation.RegexError */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  for (let i = 0; i < examples.length; i++) {
    if (i > 0) out += ' or ';
    out += `'${examples[i]}', `;
  }
  return `${out}regex used for validation is '${fmt}')`;
}

const maxLenError = (n: number): string => `must be no more than ${n} characters`;

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(v)) {
    errs.push(
      regexError(
        'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character',
        DNS1123_LABEL_FMT,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errs;
}

const PORT_NAME_CHARSET_RE = /^[-a-z0-9]+$/;
const PORT_NAME_LETTER_RE = /[a-z]/;

/** apimachinery's IsValidPortName (an IANA_SVC_NAME): at most 15 of [-a-z0-9], a letter, no `--`, no hyphen at an end */
export function isValidPortName(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 15) errs.push(maxLenError(15));
  if (!PORT_NAME_CHARSET_RE.test(v)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!PORT_NAME_LETTER_RE.test(v)) errs.push('must contain at least one letter (a-z)');
  if (v.includes('--')) errs.push('must not contain consecutive hyphens');
  if (v.startsWith('-') || v.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(v)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/** path-segment names (RBAC objects): anything but `.`/`..`, `/` and `%` */
export function isValidPathSegmentName(v: string, prefix = false): string[] {
  const errs: string[] = [];
  if (!prefix) {
    if (v === '.' || v === '..') return [`may not be '${v}'`];
  }
  if (v.includes('/')) errs.push("may not contain '/'");
  if (v.includes('%')) errs.push("may not contain '%'");
  return errs;
}

const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

export function isQualifiedName(v: string): string[] {
  const errs: string[] = [];
  const [first = '', second, ...rest] = v.split('/');
  let name: string;
  if (second === undefined) name = first;
  else if (rest.length === 0) {
    const prefix = first;
    name = second;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(v)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** Kubernetes' generateName mask: a trailing '-' is allowed in a prefix */
function maskTrailingDash(v: string): string {
  return v.length > 1 && v.endsWith('-') ? `${v.slice(0, -2)}a` : v;
}

export function nameValidator(kind: NameValidation): (name: string, prefix: boolean) => string[] {
  switch (kind) {
    case 'DNS1123Label':
      return (n, prefix) => isDNS1123Label(prefix ? maskTrailingDash(n) : n);
    case 'DNS1035Label':
      return (n, prefix) => isDNS1035Label(prefix ? maskTrailingDash(n) : n);
    case 'PathSegment':
      return (n, prefix) => isValidPathSegmentName(n, prefix);
    default:
      return (n, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(n) : n);
  }
}

const invalid = (field: string, value: unknown, message: string): FieldError => ({
  field,
  type: 'FieldValueInvalid',
  message: `Invalid value: ${badValue(value)}: ${message}`,
});

export function validateObjectMeta(meta: ObjectMeta | undefined, rules: ObjectMetaRules): FieldError[] {
  const errs: FieldError[] = [];
  const m: ObjectMeta = meta ?? {};
  const nameFn = nameValidator(rules.nameValidation ?? (rules.nameIsDNSLabel ? 'DNS1123Label' : 'DNS1123Subdomain'));

  if (m.generateName) {
    for (const msg of nameFn(m.generateName, true)) errs.push(invalid('metadata.generateName', m.generateName, msg));
  }
  if (!m.name) {
    if (!m.generateName) {
      errs.push({ field: 'metadata.name', type: 'FieldValueRequired', message: 'Required value: name or generateName is required' });
    }
  } else {
    for (const msg of nameFn(m.name, false)) errs.push(invalid('metadata.name', m.name, msg));
  }

  if (rules.namespaced) {
    if (!m.namespace) errs.push({ field: 'metadata.namespace', type: 'FieldValueRequired', message: 'Required value' });
    else for (const msg of isDNS1123Label(m.namespace)) errs.push(invalid('metadata.namespace', m.namespace, msg));
  } else if (m.namespace) {
    errs.push({ field: 'metadata.namespace', type: 'FieldValueForbidden', message: 'Forbidden: not allowed on this type' });
  }

  if (typeof m.generation === 'number' && m.generation < 0) {
    errs.push(invalid('metadata.generation', m.generation, 'must be greater than or equal to 0'));
  }

  errs.push(...validateLabelsAndAnnotations(m, 'metadata'));

  if (m.finalizers) errs.push(...validateFinalizers(m.finalizers, rules.standardFinalizers ?? []));
  if (m.ownerReferences) errs.push(...validateOwnerReferences(m.ownerReferences));
  return errs;
}

const BUILTIN_FINALIZERS = ['orphan', 'foregroundDeletion', 'kubernetes', 'orch'];

function validateFinalizers(finalizers: string[], extra: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  let orphan = false;
  let foreground = false;
  for (const f of finalizers) {
    if (typeof f !== 'string') continue;
    const msgs = isQualifiedName(f);
    for (const msg of msgs) errs.push(invalid('metadata.finalizers', f, msg));
    if (msgs.length === 0 && !f.includes('/') && !BUILTIN_FINALIZERS.includes(f) && !extra.includes(f)) {
      errs.push(invalid('metadata.finalizers', f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
    if (f === 'orphan') orphan = true;
    if (f === 'foregroundDeletion') foreground = true;
  }
  if (orphan && foreground) {
    errs.push(invalid('metadata.finalizers', finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

function validateOwnerReferences(refs: ObjectMeta['ownerReferences'] & object): FieldError[] {
  const errs: FieldError[] = [];
  const controllers: string[] = [];
  for (const r of refs) {
    if (!r || typeof r !== 'object') continue;
    const apiVersion = typeof r.apiVersion === 'string' ? r.apiVersion : '';
    const kind = typeof r.kind === 'string' ? r.kind : '';
    if (!apiVersion) errs.push(invalid('metadata.ownerReferences.apiVersion', apiVersion, 'version must not be empty'));
    if (!kind) errs.push(invalid('metadata.ownerReferences.kind', kind, 'kind must not be empty'));
    if (!r.name) errs.push(invalid('metadata.ownerReferences.name', r.name ?? '', 'name must not be empty'));
    if (!r.uid) errs.push(invalid('metadata.ownerReferences.uid', r.uid ?? '', 'uid must not be empty'));
    if (r.controller === true) controllers.push(`${kind}/${String(r.name ?? '')}`);
  }
  if (controllers.length > 1) {
    errs.push(
      invalid(
        'metadata.ownerReferences',
        refs,
        `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(' and ')}`,
      ),
    );
  }
  return errs;
}

/** kube's ValidateLabels and ValidateAnnotations of `meta` at `at` (`metadata`, `spec.template.metadata`) */
export function validateLabelsAndAnnotations(m: Pick<ObjectMeta, 'labels' | 'annotations'>, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (m.labels) {
    for (const k of Object.keys(m.labels)) {
      for (const msg of isQualifiedName(k)) errs.push(invalid(`${at}.labels`, k, msg));
      const v = m.labels[k];
      if (typeof v === 'string') for (const msg of isValidLabelValue(v)) errs.push(invalid(`${at}.labels`, v, msg));
    }
  }

  if (m.annotations) {
    let size = 0;
    for (const k of Object.keys(m.annotations)) {
      for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(`${at}.annotations`, k, msg));
      const v = m.annotations[k];
      size += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
    }
    if (size > TOTAL_ANNOTATION_SIZE_LIMIT) {
      errs.push({
        field: `${at}.annotations`,
        type: 'FieldValueTooLong',
        message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
      });
    }
  }

  return errs;
}
