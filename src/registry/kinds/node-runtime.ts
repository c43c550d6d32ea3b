// node.<domain>/v1 RuntimeClass (spec 000 §9 deprecation table): stored and
// served with kube 1.32's validation (pkg/apis/node/validation). The
// RuntimeClass admission plugin (src/registry/runtime-class-admission.ts)
// applies `overhead` and `scheduling` to new pods naming a class; the node
// agent runs every pod the same way whatever its handler.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import { isDNS1123Label, isQualifiedName, isValidLabelValue } from '../../machinery/schema/object-meta.js';
import { parseQuantity } from '../../core/quantity.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { column, get, getArray, getObject, getString } from './columns.js';
import { atomicList, mapOf, obj, proto, ref, str, strMap } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { immutable, invalid, invalidShown, notSupported } from './field-errors.js';

export function runtimeClassDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('node'), version: 'v1', kind: 'RuntimeClass', resource: 'runtimeclasses', singular: 'runtimeclass', scope: 'Cluster',
    schema: kindSchema(n, 'RuntimeClass defines a class of container runtime supported in the cluster; its overhead and scheduling are applied to new pods that name it.', proto({ handler: 2, overhead: 3, scheduling: 4 }, {
      handler: str('The underlying runtime and configuration the CRI implementation uses for pods of this class; a DNS label. Immutable.'),
      overhead: obj('Overhead of running a pod of this class.', proto({ podFixed: 1 }, {
        podFixed: mapOf('The fixed resource overhead of a pod of this class.', ref(n.quantity)),
      })),
      scheduling: obj('Constraints that make pods of this class land on nodes that support it.', proto({ nodeSelector: 1, tolerations: 2 }, {
        nodeSelector: strMap('Labels a node must carry to run pods of this class.', { 'x-orch-map-type': 'atomic' }),
        tolerations: atomicList('Tolerations added to pods of this class.', ref(n.core('Toleration'))),
      })),
    })),
    strategy: {
      validate: validateRuntimeClass,
      validateUpdate: (o, old) => [...validateRuntimeClass(o), ...immutable('handler', o.handler, old.handler)],
      columns: [column('Handler', 'string', (o) => getString(o, 'handler') ?? '')],
    },
  };
}

function validateRuntimeClass(o: ApiObject): FieldError[] {
  const handler = typeof o.handler === 'string' ? o.handler : '';
  const errs = isDNS1123Label(handler).map((m) => invalid('handler', handler, m));
  // kube reuses ResourceRequirements validation, so the path reads `overhead.limits[<name>]`
  for (const [name, q] of Object.entries(getObject(o, 'overhead', 'podFixed') ?? {})) {
    const v = parseQuantity(q);
    if (v !== undefined && v < 0) errs.push(invalid(`overhead.limits[${name}]`, q, 'must be greater than or equal to 0'));
  }
  for (const [k, v] of Object.entries(getObject(o, 'scheduling', 'nodeSelector') ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(invalid('scheduling.nodeSelector', k, m));
    if (typeof v === 'string') for (const m of isValidLabelValue(v)) errs.push(invalid('scheduling.nodeSelector', v, m));
  }
  getArray(o, 'scheduling', 'tolerations').forEach((t, i) => errs.push(...validateToleration(t, `scheduling.tolerations[${i}]`)));
  return errs;
}

/** kube 1.32 gives the whole toleration back, as Go's %#v of the internal struct (a set tolerationSeconds is a pointer kube prints as an address) */
function goToleration(key: string, op: string, value: string, effect: string, seconds: JSONValue | undefined): string {
  const ptr = seconds === undefined || seconds === null ? '(*int64)(nil)' : '(*int64)(0xc000000000)';
  return `core.Toleration{Key:${JSON.stringify(key)}, Operator:${JSON.stringify(op)}, Value:${JSON.stringify(value)}, Effect:${JSON.stringify(effect)}, TolerationSeconds:${ptr}}`;
}

/** kube's core ValidateTolerations for one entry */
export function validateToleration(t: unknown, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const key = getString(t, 'key') ?? '';
  const op = getString(t, 'operator') ?? '';
  const value = getString(t, 'value') ?? '';
  const effect = getString(t, 'effect') ?? '';
  if (key) for (const m of isQualifiedName(key)) errs.push(invalid(`${at}.key`, key, m));
  if (!key && op !== 'Exists') errs.push(invalid(`${at}.operator`, op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
  if (get(t, 'tolerationSeconds') != null && effect !== 'NoExecute') {
    errs.push(invalid(`${at}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
  }
  if (op === 'Equal' || op === '') {
    const bad = isValidLabelValue(value);
    if (bad.length > 0) errs.push(invalid(`${at}.operator`, value, bad.join(';')));
  } else if (op === 'Exists') {
    if (value) errs.push(invalidShown(`${at}.operator`, goToleration(key, op, value, effect, get(t, 'tolerationSeconds')), "value must be empty when `operator` is 'Exists'"));
  } else {
    errs.push(notSupported(`${at}.operator`, op, ['Equal', 'Exists']));
  }
  if (effect && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) {
    errs.push(notSupported(`${at}.effect`, effect, ['NoExecute', 'NoSchedule', 'PreferNoSchedule']));
  }
  return errs;
}
