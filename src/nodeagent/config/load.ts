// Reads the main configuration file (`--config`) and the drop-ins of
// `--config-dir` (files ending in `.conf`, lexical order of their names),
// validates each, merges them (spec 002 §2.4) and fills the defaults.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FEATURE_GATES, featureEnabled, unknownGates } from '../features.js';
import { parseThreshold } from '../host.js';
import { sysctlAllowlist } from '../sysctl-allowlist.js';
import { startupErrors } from './validate.js';
import { CONFIG_KIND, CONFIG_SCHEMA, ConfigError, configApiVersion, mergeConfig, parseDuration, validateFields } from './schema.js';

/** the merged configuration with every default filled (durations in ms) */
export interface NodeAgentConfig {
  staticPodPath: string;
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  containerRuntimeEndpoint: string;
  imageServiceEndpoint: string;
  runtimeRequestTimeout: number;
  runtimeRelistPeriod: number;
  syncFrequency: number;
  /** the cap of a crash-looping container's restart back-off, ms (kubelet's 300 s unless configured) */
  crashLoopBackOff: { maxContainerRestartPeriod: number };
  address: string;
  port: number;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  authentication: {
    anonymous: { enabled: boolean };
    webhook: { enabled: boolean; cacheTTL: number };
    x509: { clientCAFile: string };
  };
  authorization: { mode: 'AlwaysAllow' | 'Webhook' };
  featureGates: Record<string, boolean>;
  registerNode: boolean;
  registerWithTaints: Record<string, unknown>[];
  nodeLabels: Record<string, string>;
  maxPods: number;
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  evictionHard: Record<string, string>;
  evictionPressureTransitionPeriod: number;
  nodeStatusUpdateFrequency: number;
  nodeStatusReportFrequency: number;
  nodeLeaseDurationSeconds: number;
  nodeLeaseRenewInterval: number;
  hostReadingsFile: string;
  clusterDomain: string;
  clusterDNS: string[];
  /** kubelet's allowedUnsafeSysctls: names or patterns ending in `*`, each known to be namespaced */
  allowedUnsafeSysctls: string[];
  eventRecordQPS: number;
  eventBurst: number;
}

/** the defaults, in the file form (what --print-config shows for unset fields) */
export const DEFAULTS: Record<string, unknown> = {
  staticPodPath: '/etc/orch/manifests',
  staticPodURL: '',
  staticPodURLHeader: {},
  containerRuntimeEndpoint: '',
  imageServiceEndpoint: '',
  runtimeRequestTimeout: '2m',
  runtimeRelistPeriod: '1s',
  syncFrequency: '1m',
  address: '0.0.0.0',
  port: 10250,
  tlsCertFile: '',
  tlsPrivateKeyFile: '',
  authentication: { anonymous: { enabled: false }, webhook: { enabled: true, cacheTTL: '2m' }, x509: { clientCAFile: '' } },
  authorization: { mode: 'Webhook' },
  featureGates: {},
  registerNode: true,
  registerWithTaints: [],
  nodeLabels: {},
  maxPods: 110,
  systemReserved: {},
  kubeReserved: {},
  // Kubernetes' defaults (memory.available<100Mi, nodefs.available<10%, pid.available<10%... here as percentages of the host)
  evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'pid.available': '10%' },
  evictionPressureTransitionPeriod: '5m',
  nodeStatusUpdateFrequency: '10s',
  nodeStatusReportFrequency: '5m',
  nodeLeaseDurationSeconds: 40,
  nodeLeaseRenewInterval: '10s',
  eventRecordQPS: 50,
  eventBurst: 100,
  hostReadingsFile: '',
  clusterDomain: 'cluster.local',
  clusterDNS: [],
  allowedUnsafeSysctls: [],
};

export interface LoadOptions {
  configFile?: string;
  configDir?: string;
  domain: string;
}

async function readDoc(file: string, domain: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${file}: cannot read: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ConfigError(`${file}: not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(`${file}: must be an object with apiVersion and kind`);
  const { apiVersion, kind, ...fields } = doc as Record<string, unknown>;
  if (apiVersion !== configApiVersion(domain)) {
    throw new ConfigError(`${file}: field "apiVersion" must be ${configApiVersion(domain)}, got ${JSON.stringify(apiVersion ?? null)}`);
  }
  if (kind !== CONFIG_KIND) throw new ConfigError(`${file}: field "kind" must be ${CONFIG_KIND}, got ${JSON.stringify(kind ?? null)}`);
  validateFields(file, fields, CONFIG_SCHEMA);
  return fields;
}

/** the files merged, in order: the main file then the drop-ins */
export async function configFiles(o: LoadOptions): Promise<string[]> {
  const files = o.configFile ? [o.configFile] : [];
  if (o.configDir) files.push(...(await dropIns(o.configDir)));
  return files;
}

/**
 * the `*.conf` files under a drop-in directory as kubelet's filepath.WalkDir visits them: each directory's
 * entries in byte order of their names ("lexical" must not depend on the locale), descending into
 * subdirectories where they stand; directories themselves (one named x.conf too) are skipped
 */
async function dropIns(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    throw new ConfigError(`${dir}: cannot read the drop-in directory: ${(e as Error).message}`);
  }
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await dropIns(path)));
    else if (e.name.endsWith('.conf')) out.push(path);
  }
  return out;
}

/** the merged file form (without defaults): what the files say */
export async function loadMergedFields(o: LoadOptions): Promise<Record<string, unknown>> {
  let merged: Record<string, unknown> = {};
  for (const f of await configFiles(o)) merged = mergeConfig(merged, await readDoc(f, o.domain));
  return merged;
}

/** the file form with defaults filled, as --print-config shows it */
export function withDefaults(fields: Record<string, unknown>, domain: string): Record<string, unknown> {
  return { apiVersion: configApiVersion(domain), kind: CONFIG_KIND, ...mergeConfig(structuredClone(DEFAULTS), fields) };
}

export function resolveConfig(fileForm: Record<string, unknown>): NodeAgentConfig {
  const c = structuredClone(fileForm) as Record<string, unknown>;
  delete c.apiVersion;
  delete c.kind;
  for (const k of ['evictionPressureTransitionPeriod', 'runtimeRequestTimeout', 'runtimeRelistPeriod', 'syncFrequency', 'nodeStatusUpdateFrequency', 'nodeStatusReportFrequency', 'nodeLeaseRenewInterval']) {
    c[k] = parseDuration(c[k] as string);
  }
  const authn = c.authentication as { webhook: { cacheTTL: unknown } };
  authn.webhook.cacheTTL = parseDuration(authn.webhook.cacheTTL as string);
  const mode = (c.authorization as { mode: string }).mode;
  if (mode !== 'AlwaysAllow' && mode !== 'Webhook') throw new ConfigError(`field "authorization.mode" must be AlwaysAllow or Webhook, got "${mode}"`);
  const gates = unknownGates(c.featureGates as Record<string, boolean>);
  if (gates.length) throw new ConfigError(`field "featureGates": unknown feature gate(s) ${gates.join(', ')} (known: ${Object.keys(FEATURE_GATES).join(', ')})`);
  c.crashLoopBackOff = { maxContainerRestartPeriod: crashLoopBackOffMax(c) };
  for (const [k, v] of Object.entries(c.evictionHard as Record<string, string>)) {
    if (!['memory.available', 'nodefs.available', 'pid.available'].includes(k)) throw new ConfigError(`field "evictionHard.${k}": unknown signal (memory.available, nodefs.available, pid.available)`);
    if (parseThreshold(v, 100) === undefined) throw new ConfigError(`field "evictionHard.${k}": "${v}" is not a quantity (100Mi) or a percentage (10%)`);
  }
  // kubelet's ValidateKubeletConfiguration: refuse to start
  const errs = startupErrors(c);
  if (errs.length) throw new ConfigError(errs.join('; '));
  try {
    // kubelet builds its allowlist at start and refuses to start on a bad entry
    sysctlAllowlist(c.allowedUnsafeSysctls as string[]);
  } catch (e) {
    throw new ConfigError(`field "allowedUnsafeSysctls": ${(e as Error).message}`);
  }
  return c as unknown as NodeAgentConfig;
}

/** kubelet's MaxContainerBackOff: the cap of a crash-looping container's back-off unless configured */
export const MAX_CONTAINER_BACKOFF_MS = 300_000;

/**
 * `crashLoopBackOff.maxContainerRestartPeriod` in ms: kube 1.32 accepts it only
 * with the (alpha) KubeletCrashLoopBackOffMax gate on, between 1s and 300s;
 * unset, the cap stays 300 s. Kubelet's messages.
 */
function crashLoopBackOffMax(c: Record<string, unknown>): number {
  const set = (c.crashLoopBackOff as { maxContainerRestartPeriod?: string } | undefined)?.maxContainerRestartPeriod;
  if (set === undefined) return MAX_CONTAINER_BACKOFF_MS;
  if (!featureEnabled(c.featureGates as Record<string, boolean>, 'KubeletCrashLoopBackOffMax')) {
    throw new ConfigError('invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set');
  }
  // a well-formed duration (validateFields)
  const ms = parseDuration(set) ?? 0;
  if (ms < 1_000 || ms > MAX_CONTAINER_BACKOFF_MS) {
    throw new ConfigError(`invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: ${ms / 1000} seconds) must be set between 1s and 300s`);
  }
  return ms;
}

export async function loadConfig(o: LoadOptions): Promise<{ config: NodeAgentConfig; fileForm: Record<string, unknown> }> {
  const fileForm = withDefaults(await loadMergedFields(o), o.domain);
  return { config: resolveConfig(fileForm), fileForm };
}
