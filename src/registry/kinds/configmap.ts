// core/v1 ConfigMap: string data and binary data under config keys; once
// `immutable` is true neither the data nor the flag may change.

import { isConfigKey, immutableDataErrors } from './config-data.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, countKeys } from './columns.js';
import { bool, mapOf, proto, strMap } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';

export function configMapDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    singular: 'configmap',
    scope: 'Namespaced',
    shortNames: ['cm'],
    schema: kindSchema(n, 'ConfigMap holds configuration data for pods to consume.', proto({ data: 2, binaryData: 3, immutable: 4 }, {
      immutable: bool('If true, data and binaryData cannot be updated (only the object deleted and recreated).'),
      data: strMap('Configuration data: keys of alphanumerics, "-", "_" or "."; values UTF-8 strings.'),
      binaryData: mapOf('Binary configuration data, base64-encoded in JSON. Keys may not overlap with data.', { type: 'string', format: 'byte' }),
    })),
    strategy: {
      validate: (o) => validateConfigMap(o),
      validateUpdate: (o, old) => [...validateConfigMap(o), ...immutableDataErrors(o, old, ['data', 'binaryData'])],
      columns: [column('Data', 'integer', (o) => countKeys(o, 'data') + countKeys(o, 'binaryData'), { description: 'Number of data entries' })],
    },
  };
}

const MAX_CONFIG_SIZE = 1024 * 1024;

function validateConfigMap(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const data = (o.data ?? {}) as Record<string, unknown>;
  const bin = (o.binaryData ?? {}) as Record<string, unknown>;
  let size = 0;
  for (const k of Object.keys(data)) {
    for (const m of isConfigKey(k)) errs.push({ field: `data[${k}]`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(k)}: ${m}` });
    size += typeof data[k] === 'string' ? Buffer.byteLength(data[k] as string) : 0;
  }
  for (const k of Object.keys(bin)) {
    for (const m of isConfigKey(k)) errs.push({ field: `binaryData[${k}]`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(k)}: ${m}` });
    if (k in data) errs.push({ field: `data[${k}]`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(k)}: duplicate of key present in binaryData` });
    size += typeof bin[k] === 'string' ? Math.floor(((bin[k] as string).length * 3) / 4) : 0;
  }
  if (size > MAX_CONFIG_SIZE) errs.push({ field: '', type: 'FieldValueTooLong', message: `Too long: must have at most ${MAX_CONFIG_SIZE} bytes` });
  return errs;
}
