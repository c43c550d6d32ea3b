// The NodeAgentConfiguration schema (spec 002 §2.4, §4.2): every field's value
// type, which decides both validation (unknown fields and wrong types are
// errors naming the field) and the drop-in merge rule of §2.4.

export type FieldType =
  | { kind: 'string' }
  | { kind: 'int'; min?: number }
  | { kind: 'bool' }
  | { kind: 'duration' }
  | { kind: 'list'; item: 'string' | 'object' }
  | { kind: 'scalarMap'; value: 'string' | 'bool' }
  | { kind: 'listMap' }
  | { kind: 'struct'; fields: Record<string, FieldType> };

const string: FieldType = { kind: 'string' };
const bool: FieldType = { kind: 'bool' };
const duration: FieldType = { kind: 'duration' };
const int = (min = 0): FieldType => ({ kind: 'int', min });
const struct = (fields: Record<string, FieldType>): FieldType => ({ kind: 'struct', fields });

export const CONFIG_KIND = 'NodeAgentConfiguration';
export const configApiVersion = (domain: string) => `nodeagent.config.${domain}/v1beta1`;

/** the fields of the configuration (apiVersion and kind are checked separately) */
export const CONFIG_SCHEMA: Record<string, FieldType> = {
  // where static pod manifests live (§4.2), and headers for a manifest URL (map of lists, §2.4)
  staticPodPath: string,
  staticPodURL: string,
  staticPodURLHeader: { kind: 'listMap' },
  // runtime sockets (§4.2)
  containerRuntimeEndpoint: string,
  imageServiceEndpoint: string,
  runtimeRequestTimeout: duration,
  // how often the runtime is asked for container states (the agent's relist)
  runtimeRelistPeriod: duration,
  // kubelet's syncFrequency: how often a running pod's ConfigMap, Secret and downward API volumes are refreshed
  syncFrequency: duration,
  // kubelet's crashLoopBackOff (feature gate KubeletCrashLoopBackOffMax): the back-off's cap, 1s–300s
  crashLoopBackOff: struct({ maxContainerRestartPeriod: duration }),
  // the agent's HTTPS server (§4.1)
  address: string,
  port: int(0),
  tlsCertFile: string,
  tlsPrivateKeyFile: string,
  authentication: struct({
    anonymous: struct({ enabled: bool }),
    webhook: struct({ enabled: bool, cacheTTL: duration }),
    x509: struct({ clientCAFile: string }),
  }),
  authorization: struct({ mode: string }),
  featureGates: { kind: 'scalarMap', value: 'bool' },
  // node registration and status (§2.1, §2.2, §8)
  registerNode: bool,
  registerWithTaints: { kind: 'list', item: 'object' },
  nodeLabels: { kind: 'scalarMap', value: 'string' },
  maxPods: int(1),
  systemReserved: { kind: 'scalarMap', value: 'string' },
  kubeReserved: { kind: 'scalarMap', value: 'string' },
  evictionHard: { kind: 'scalarMap', value: 'string' },
  evictionPressureTransitionPeriod: duration,
  nodeStatusUpdateFrequency: duration,
  nodeStatusReportFrequency: duration,
  nodeLeaseDurationSeconds: int(1),
  nodeLeaseRenewInterval: duration,
  // a JSON file of host readings that replace the measured ones (simulation and tests)
  hostReadingsFile: string,
  clusterDomain: string,
  // kubelet's allowedUnsafeSysctls: sysctls (or patterns ending in *) pods may set beyond the safe set
  allowedUnsafeSysctls: { kind: 'list', item: 'string' },
  clusterDNS: { kind: 'list', item: 'string' },
  // kubelet's limits on Event writes (0 = none), on top of the per-object spam filter
  eventRecordQPS: int(0),
  eventBurst: int(0),
};

/** Go-style durations: 300ms, 10s, 5m, 1h, 1m30s */
export function parseDuration(v: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(v) && v !== '0') return undefined;
  let total = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms'];
  return total;
}

export class ConfigError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** check `value` against the schema; errors name the file and the field path */
export function validateFields(file: string, value: Record<string, unknown>, schema: Record<string, FieldType>, prefix = ''): void {
  for (const [k, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${k}` : k;
    const t = schema[k];
    if (!t) throw new ConfigError(`${file}: unknown field "${path}"`);
    // null: the key is removed, back to the default (kubelet merges drop-ins as RFC 7386 merge patches)
    if (v !== null) checkType(file, path, v, t);
  }
}

function checkType(file: string, path: string, v: unknown, t: FieldType): void {
  const bad = (what: string) => new ConfigError(`${file}: field "${path}" must be ${what}, got ${JSON.stringify(v)}`);
  switch (t.kind) {
    case 'string':
      if (typeof v !== 'string') throw bad('a string');
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw bad('a boolean');
      return;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw bad('an integer');
      if (t.min !== undefined && v < t.min) throw bad(`an integer of at least ${t.min}`);
      return;
    case 'duration':
      if (typeof v !== 'string' || parseDuration(v) === undefined) throw bad('a duration such as 10s, 5m or 1m30s');
      return;
    case 'list':
      if (!Array.isArray(v)) throw bad('a list');
      v.forEach((item, i) => {
        if (t.item === 'string' ? typeof item !== 'string' : !isObject(item)) {
          throw new ConfigError(`${file}: field "${path}[${i}]" must be ${t.item === 'string' ? 'a string' : 'an object'}`);
        }
      });
      return;
    case 'scalarMap':
      if (!isObject(v)) throw bad('a map');
      for (const [k, x] of Object.entries(v)) {
        if (x !== null && typeof x !== (t.value === 'bool' ? 'boolean' : 'string')) throw new ConfigError(`${file}: field "${path}.${k}" must be a ${t.value === 'bool' ? 'boolean' : 'string'}`);
      }
      return;
    case 'listMap':
      if (!isObject(v)) throw bad('a map of string lists');
      for (const [k, x] of Object.entries(v)) {
        if (x !== null && (!Array.isArray(x) || x.some((s) => typeof s !== 'string'))) throw new ConfigError(`${file}: field "${path}.${k}" must be a list of strings`);
      }
      return;
    case 'struct':
      if (!isObject(v)) throw bad('an object');
      validateFields(file, v, t.fields, path);
      return;
  }
}

/** a value with the null members of its objects removed (what a merge patch leaves of it over nothing) */
function withoutNulls(v: unknown): unknown {
  if (!isObject(v)) return structuredClone(v);
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, withoutNulls(x)]));
}

/**
 * Merge a drop-in over a base by the four rules of spec 002 §2.4:
 * scalars and structures per field (recursively), lists replaced whole,
 * scalar maps per key, maps of lists per key with the list replaced whole.
 * These are RFC 7386's, as kubelet applies drop-ins (mergeKubeletConfigurations,
 * jsonpatch.MergePatch): a null removes the key (the default then applies).
 */
export function mergeConfig(base: Record<string, unknown>, over: Record<string, unknown>, schema: Record<string, FieldType> = CONFIG_SCHEMA): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const t = schema[k];
    const prev = out[k];
    if (v === null) delete out[k];
    else if (t?.kind === 'struct' && isObject(prev) && isObject(v)) out[k] = mergeConfig(prev, v, t.fields);
    else if ((t?.kind === 'scalarMap' || t?.kind === 'listMap') && isObject(prev) && isObject(v)) out[k] = withoutNulls({ ...prev, ...v });
    else out[k] = withoutNulls(v);
  }
  return out;
}
