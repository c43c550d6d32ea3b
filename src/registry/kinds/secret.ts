// core/v1 Secret: base64 `data`; `stringData` is a write-only convenience the
// strategy merges into `data` (base64-encoded, winning over data) on create and
// update, then removes. `type` defaults to Opaque and cannot change.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { immutableDataErrors, isConfigKey } from './config-data.js';
import { column, countKeys, fieldOf, getString } from './columns.js';
import { bool, mapOf, proto, str, strMap } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { goJsonError } from '../../machinery/go-json-error.js';

/**
 * A well-known Secret type (`<prefix>/tls`, `<prefix>/service-account-token`, …) split at its prefix, which may be
 * the API domain, its first label or Kubernetes' `kubernetes.io`; undefined for any other type.
 */
export function wellKnownSecretType(t: string, apiDomain: string): { prefix: string; suffix: string } | undefined {
  const slash = t.indexOf('/');
  if (slash < 0) return undefined;
  const prefix = t.slice(0, slash);
  return prefix === apiDomain || prefix === 'kubernetes.io' || prefix === apiDomain.split('.')[0] ? { prefix, suffix: t.slice(slash + 1) } : undefined;
}

export function secretDefinition(n: SchemaNames): ResourceDefinition {
  const typeSuffix = (t: string): string | undefined => wellKnownSecretType(t, n.apiDomain)?.suffix;
  return {
    group: '',
    version: 'v1',
    kind: 'Secret',
    resource: 'secrets',
    singular: 'secret',
    scope: 'Namespaced',
    schema: kindSchema(n, 'Secret holds secret data of a certain type; values are base64-encoded in JSON.', proto({ data: 2, type: 3, stringData: 4, immutable: 5 }, {
      immutable: bool('If true, data cannot be updated (only the object deleted and recreated).'),
      data: mapOf('Secret data: keys of alphanumerics, "-", "_" or "."; values base64-encoded.', { type: 'string', format: 'byte' }),
      stringData: strMap('Write-only non-binary data merged into data on write; never output when read.'),
      type: str('Used to facilitate programmatic handling of secret data.', { default: 'Opaque' }),
    })),
    strategy: {
      prepareForCreate: mergeStringData,
      prepareForUpdate: (o) => mergeStringData(o),
      validate: (o) => validateSecret(o, typeSuffix),
      validateUpdate: (o, old) => {
        const errs = validateSecret(o, typeSuffix);
        if ((o.type ?? 'Opaque') !== (old.type ?? 'Opaque')) {
          errs.push({ field: 'type', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(o.type ?? '')}: field is immutable` });
        }
        errs.push(...immutableDataErrors(o, old, ['data']));
        return errs;
      },
      columns: [
        column('Type', 'string', (o) => getString(o, 'type') ?? ''),
        column('Data', 'integer', (o) => countKeys(o, 'data')),
      ],
      selectableFields: { type: fieldOf('type') },
    },
  };
}

/**
 * Folds stringData into data. Non-string values are left in place so the
 * schema walk reports their type error instead of silently dropping them.
 */
function mergeStringData(o: ApiObject): void {
  const sd = o.stringData;
  if (sd === undefined || sd === null) {
    delete o.stringData;
    return;
  }
  if (typeof sd !== 'object' || Array.isArray(sd)) return;
  for (const v of Object.values(sd)) if (typeof v !== 'string') return;
  const data = o.data && typeof o.data === 'object' && !Array.isArray(o.data) ? o.data : {};
  for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(v as string, 'utf8').toString('base64');
  o.data = data;
  delete o.stringData;
}

/**
 * kube's ValidateSecret for the docker config types: the value must decode as a JSON object (Go's
 * json.Unmarshal into a map, so `null` passes), the contents never shown
 */
function jsonObjectErrors(data: Record<string, unknown>, key: string): FieldError[] {
  const value = data[key];
  if (typeof value !== 'string') return [];
  const text = Buffer.from(value, 'base64').toString('utf8');
  let message: string | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) {
      const goType = Array.isArray(parsed) ? 'array' : typeof parsed === 'boolean' ? 'bool' : typeof parsed;
      message = `json: cannot unmarshal ${goType} into Go value of type map[string]interface {}`;
    }
  } catch (e) {
    message = goJsonError(text, (e as Error).message);
  }
  return message === undefined ? [] : [{ field: `data[${key}]`, type: 'FieldValueInvalid', message: `Invalid value: "<secret contents redacted>": ${message}` }];
}

function validateSecret(o: ApiObject, typeSuffix: (t: string) => string | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const data = (o.data && typeof o.data === 'object' && !Array.isArray(o.data) ? o.data : {}) as Record<string, unknown>;
  let size = 0;
  for (const k of Object.keys(data)) {
    for (const m of isConfigKey(k)) errs.push({ field: `data[${k}]`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(k)}: ${m}` });
    size += typeof data[k] === 'string' ? Math.floor(((data[k] as string).length * 3) / 4) : 0;
  }
  if (size > 1024 * 1024) errs.push({ field: 'data', type: 'FieldValueTooLong', message: 'Too long: must have at most 1048576 bytes' });
  const t = typeof o.type === 'string' ? o.type : 'Opaque';
  const requireKey = (k: string): void => {
    if (!(k in data)) errs.push({ field: `data[${k}]`, type: 'FieldValueRequired', message: 'Required value' });
  };
  switch (typeSuffix(t)) {
    case 'tls':
      requireKey('tls.crt');
      requireKey('tls.key');
      break;
    case 'dockerconfigjson':
      requireKey('.dockerconfigjson');
      errs.push(...jsonObjectErrors(data, '.dockerconfigjson'));
      break;
    case 'dockercfg':
      requireKey('.dockercfg');
      errs.push(...jsonObjectErrors(data, '.dockercfg'));
      break;
    case 'service-account-token': {
      // kube requires only the account's name; a controller adds the rest
      const key = `${t.slice(0, t.indexOf('/'))}/service-account.name`;
      const annotations = (o.metadata?.annotations ?? {}) as Record<string, unknown>;
      if (!annotations[key]) errs.push({ field: `metadata.annotations[${key}]`, type: 'FieldValueRequired', message: 'Required value' });
      break;
    }
    case 'basic-auth':
      // either may be empty, one must be there; kube names both when neither is
      if (!('username' in data) && !('password' in data)) {
        requireKey('username');
        requireKey('password');
      }
      break;
    case 'ssh-auth':
      requireKey('ssh-privatekey');
      break;
    default:
  }
  if (t === '') errs.push({ field: 'type', type: 'FieldValueRequired', message: 'Required value' });
  return errs;
}
