// core/v1 Pod. The PodSpec/PodStatus structures live in core-types.ts; this
// file holds the kind's strategy: image pull policy defaulting, initial status,
// container/volume/port rules, spec immutability, kubectl's Table columns.

import { isDNS1123Label } from '../../machinery/schema/object-meta.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { column, fieldOf, get, getArray, getObject, getString } from './columns.js';
import { ref } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { bindingCapability } from './pod-binding.js';
import { evictionCapability } from './pod-eviction.js';
import { aliasServiceAccount, defaultRequestsFromLimits, validateContainerResources } from './pod-resources.js';
import { EPHEMERAL_SUBRESOURCE, validateEphemeralContainers, validateEphemeralContainersUpdate, validateNoEphemeralOnCreate } from './pod-ephemeral.js';

export function podDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'Pod',
    resource: 'pods',
    returnDeletedObject: true,
    singular: 'pod',
    scope: 'Namespaced',
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status', 'binding', 'eviction', 'ephemeralcontainers', 'log', 'exec', 'attach', 'portforward', 'proxy'],
    schema: kindSchema(n, 'Pod is a collection of containers that can run on a host.', {
      spec: ref(n.core('PodSpec'), 'Desired behaviour of the pod.', { 'x-orch-proto-field': 2 }),
      status: ref(n.core('PodStatus'), 'Most recently observed status of the pod. Read-only.', { 'x-orch-proto-field': 3 }),
    }),
    strategy: {
      default: defaultPod,
      prepareForCreate: (o) => {
        o.status = { phase: 'Pending', qosClass: qosClass(o) };
      },
      validate: (o) => [...validatePod(o), ...validateNoEphemeralOnCreate(o)],
      // the ephemeralcontainers sub-resource changes only spec.ephemeralContainers (confineWrite), the main resource never
      validateUpdate: (o, old, sub) =>
        [...validatePod(o), ...(sub === EPHEMERAL_SUBRESOURCE ? validateEphemeralContainersUpdate(o, old) : validatePodUpdate(o, old))],
      columns: [
        column('Ready', 'string', podReady, { description: 'The aggregate readiness state of this pod for accepting traffic.' }),
        column('Status', 'string', podStatusReason, { description: 'The aggregate status of the containers in this pod.' }),
        column('Restarts', 'string', (o) => String(podRestarts(o)), { description: 'The number of times the containers in this pod have been restarted.' }),
        column('IP', 'string', (o) => getString(o, 'status', 'podIP') ?? '<none>', { priority: 1, description: 'The IP address assigned to the pod' }),
        column('Node', 'string', (o) => getString(o, 'spec', 'nodeName') ?? '<none>', { priority: 1, description: 'The name of the node assigned to this pod' }),
        column('Nominated Node', 'string', (o) => getString(o, 'status', 'nominatedNodeName') ?? '<none>', { priority: 1 }),
        column('Readiness Gates', 'string', readinessGates, { priority: 1 }),
      ],
      selectableFields: {
        'spec.nodeName': fieldOf('spec', 'nodeName'),
        'spec.restartPolicy': fieldOf('spec', 'restartPolicy'),
        'spec.schedulerName': fieldOf('spec', 'schedulerName'),
        'spec.serviceAccountName': fieldOf('spec', 'serviceAccountName'),
        'spec.hostNetwork': (o) => String(get(o, 'spec', 'hostNetwork') === true),
        'status.phase': fieldOf('status', 'phase'),
        'status.podIP': fieldOf('status', 'podIP'),
        'status.nominatedNodeName': fieldOf('status', 'nominatedNodeName'),
      },
    },
    // POST pods/{name}/eviction and pods/{name}/binding (the endpoint layer decodes the Eviction / Binding)
    capabilities: { eviction: evictionCapability(), binding: bindingCapability() },
  };
}

type Obj = Record<string, JSONValue>;

function containersOf(o: ApiObject, field: 'containers' | 'initContainers' | 'ephemeralContainers'): Obj[] {
  return getArray(o, 'spec', field).filter((c): c is Obj => c !== null && typeof c === 'object' && !Array.isArray(c));
}

/** Kubernetes defaults imagePullPolicy from the image tag */
export function defaultPod(o: ApiObject): void {
  for (const field of ['containers', 'initContainers', 'ephemeralContainers'] as const) {
    for (const c of containersOf(o, field)) {
      if (c.imagePullPolicy !== undefined || typeof c.image !== 'string') continue;
      const image = c.image;
      const lastSlash = image.lastIndexOf('/');
      const afterSlash = image.slice(lastSlash + 1);
      const digest = afterSlash.includes('@');
      const colon = afterSlash.lastIndexOf(':');
      const tag = digest ? undefined : colon >= 0 ? afterSlash.slice(colon + 1) : undefined;
      c.imagePullPolicy = !digest && (tag === undefined || tag === 'latest') ? 'Always' : 'IfNotPresent';
    }
  }
  const spec = getObject(o, 'spec');
  aliasServiceAccount(spec);
  defaultRequestsFromLimits(spec);
}

function qosClass(o: ApiObject): string {
  let anyRequest = false;
  let guaranteed = true;
  for (const c of [...containersOf(o, 'containers'), ...containersOf(o, 'initContainers')]) {
    const limits = getObject(c, 'resources', 'limits') ?? {};
    const requests = getObject(c, 'resources', 'requests') ?? {};
    for (const r of ['cpu', 'memory']) {
      const l = limits[r];
      const q = requests[r] ?? l;
      if (q !== undefined || l !== undefined) anyRequest = true;
      if (l === undefined || String(q) !== String(l)) guaranteed = false;
    }
  }
  if (!anyRequest) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function validatePod(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = getObject(o, 'spec');
  if (!spec) return [{ field: 'spec', type: 'FieldValueRequired', message: 'Required value' }];
  const volumes = new Set<string>();
  getArray(spec, 'volumes').forEach((v, i) => {
    // kube's validateVolumeSource: a volume is its name and one source (a protobuf body whose source
    // had no field number would arrive as a bare name: refused, not stored without its source)
    if (v && typeof v === 'object' && Object.keys(v).every((k) => k === 'name')) {
      errs.push({ field: `spec.volumes[${i}]`, type: 'FieldValueRequired', message: 'Required value: must specify a volume type' });
    }
    const name = getString(v, 'name');
    if (!name) return;
    for (const m of isDNS1123Label(name)) errs.push(inv(`spec.volumes[${i}].name`, name, m));
    if (volumes.has(name)) errs.push(dup(`spec.volumes[${i}].name`, name));
    volumes.add(name);
  });
  if (getArray(spec, 'containers').length === 0) errs.push({ field: 'spec.containers', type: 'FieldValueRequired', message: 'Required value' });
  const names = new Set<string>();
  for (const field of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    containersOf(o, field).forEach((c, i) => {
      const p = `spec.${field}[${i}]`;
      const name = typeof c.name === 'string' ? c.name : '';
      if (name) {
        for (const m of isDNS1123Label(name)) errs.push(inv(`${p}.name`, name, m));
        if (names.has(name)) errs.push(dup(`${p}.name`, name));
        names.add(name);
      }
      if (typeof c.image !== 'string' || c.image.trim() === '') {
        errs.push({ field: `${p}.image`, type: 'FieldValueRequired', message: 'Required value' });
      }
      getArray(c, 'ports').forEach((port, j) => {
        const cp = get(port, 'containerPort');
        if (typeof cp === 'number' && (cp < 1 || cp > 65535)) {
          errs.push(inv(`${p}.ports[${j}].containerPort`, cp, 'must be between 1 and 65535, inclusive'));
        }
        const hp = get(port, 'hostPort');
        if (typeof hp === 'number' && hp !== 0 && (hp < 1 || hp > 65535)) {
          errs.push(inv(`${p}.ports[${j}].hostPort`, hp, 'must be between 1 and 65535, inclusive'));
        }
      });
      const mountPaths = new Set<string>();
      getArray(c, 'volumeMounts').forEach((m, j) => {
        const vname = getString(m, 'name');
        if (vname && !volumes.has(vname)) {
          errs.push({ field: `${p}.volumeMounts[${j}].name`, type: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(vname)}` });
        }
        const mp = getString(m, 'mountPath');
        if (mp) {
          if (mountPaths.has(mp)) errs.push(inv(`${p}.volumeMounts[${j}].mountPath`, mp, 'must be unique'));
          mountPaths.add(mp);
        }
      });
    });
  }
  errs.push(...validateSeccomp(getObject(spec, 'securityContext', 'seccompProfile'), 'spec.securityContext.seccompProfile'));
  for (const field of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    containersOf(o, field).forEach((c, i) => errs.push(...validateSeccomp(getObject(c, 'securityContext', 'seccompProfile'), `spec.${field}[${i}].securityContext.seccompProfile`)));
  }
  errs.push(...validateContainerResources(spec, 'spec'));
  errs.push(...validateEphemeralContainers(o));
  const tgps = spec.terminationGracePeriodSeconds;
  if (typeof tgps === 'number' && tgps < 0) errs.push(inv('spec.terminationGracePeriodSeconds', tgps, 'must be greater than or equal to 0'));
  return errs;
}

/** spec 002 §2.5: localhostProfile is required for and only for type Localhost, a relative path below the seccomp directory */
function validateSeccomp(sp: Obj | undefined, p: string): FieldError[] {
  if (!sp) return [];
  const profile = sp.localhostProfile;
  if (sp.type === 'Localhost') {
    if (typeof profile !== 'string' || profile === '') return [{ field: `${p}.localhostProfile`, type: 'FieldValueRequired', message: 'Required value: must be set when seccomp type is Localhost' }];
    if (profile.startsWith('/')) return [inv(`${p}.localhostProfile`, profile, 'must be a relative path')];
    if (profile.split('/').includes('..')) return [inv(`${p}.localhostProfile`, profile, "must not contain '..'")];
    return [];
  }
  if (profile !== undefined) return [inv(`${p}.localhostProfile`, profile, 'can only be set when seccomp type is Localhost')];
  return [];
}

/** pod specs are immutable but for images, activeDeadlineSeconds, tolerations, grace period and first binding */
function validatePodUpdate(o: ApiObject, old: ApiObject): FieldError[] {
  const mutable = (spec: JSONValue | undefined, ref: JSONValue | undefined): string => {
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return JSON.stringify(spec ?? null);
    const s = structuredClone(spec) as Obj;
    // kube defaults the stored object as it reads it: one written before a default existed compares defaulted
    aliasServiceAccount(s);
    defaultRequestsFromLimits(s);
    const r = (ref && typeof ref === 'object' && !Array.isArray(ref) ? ref : {}) as Obj;
    for (const f of ['containers', 'initContainers']) {
      const arr = s[f];
      if (Array.isArray(arr)) for (const c of arr) if (c && typeof c === 'object' && !Array.isArray(c)) delete c.image;
    }
    delete s.activeDeadlineSeconds;
    delete s.tolerations;
    delete s.terminationGracePeriodSeconds;
    if (!r.nodeName) delete s.nodeName;
    return JSON.stringify(sortKeys(s));
  };
  const before = mutable(old.spec as JSONValue, old.spec as JSONValue);
  const after = mutable(o.spec as JSONValue, old.spec as JSONValue);
  if (before === after) return [];
  return [
    {
      field: 'spec',
      type: 'FieldValueForbidden',
      message:
        'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    },
  ];
}

function sortKeys(v: JSONValue): JSONValue {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Obj = {};
  for (const [k, child] of Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = sortKeys(child);
  return out;
}

const inv = (field: string, value: unknown, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${m}` });
const dup = (field: string, value: unknown): FieldError => ({ field, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(value)}` });

function podReady(o: ApiObject): string {
  const total = getArray(o, 'spec', 'containers').length;
  let ready = 0;
  for (const s of getArray(o, 'status', 'containerStatuses')) {
    if (get(s, 'ready') === true && get(s, 'state', 'running') !== undefined) ready++;
  }
  return `${ready}/${total}`;
}

function podRestarts(o: ApiObject): number {
  let r = 0;
  for (const s of [...getArray(o, 'status', 'initContainerStatuses'), ...getArray(o, 'status', 'containerStatuses')]) {
    const c = get(s, 'restartCount');
    if (typeof c === 'number') r += c;
  }
  return r;
}

function hasCondition(o: ApiObject, type: string): boolean {
  return getArray(o, 'status', 'conditions').some((c) => get(c, 'type') === type && get(c, 'status') === 'True');
}

/** kubectl's pod STATUS column */
export function podStatusReason(o: ApiObject): string {
  let reason = getString(o, 'status', 'reason') || getString(o, 'status', 'phase') || '';
  const initStatuses = getArray(o, 'status', 'initContainerStatuses');
  const initSpecs = getArray(o, 'spec', 'initContainers');
  let initializing = false;
  for (let i = 0; i < initStatuses.length; i++) {
    const s = initStatuses[i];
    const term = getObject(s, 'state', 'terminated');
    const waiting = getObject(s, 'state', 'waiting');
    if (term && term.exitCode === 0) continue;
    const spec = initSpecs.find((c) => get(c, 'name') === get(s, 'name'));
    if (get(spec, 'restartPolicy') === 'Always' && get(s, 'started') === true) continue;
    if (term) {
      reason = term.reason ? `Init:${String(term.reason)}` : term.signal ? `Init:Signal:${String(term.signal)}` : `Init:ExitCode:${String(term.exitCode)}`;
    } else if (waiting && waiting.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${String(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }
  if (!initializing || hasCondition(o, 'Initialized')) {
    let hasRunning = false;
    const statuses = getArray(o, 'status', 'containerStatuses');
    for (let i = statuses.length - 1; i >= 0; i--) {
      const s = statuses[i];
      const waiting = getObject(s, 'state', 'waiting');
      const term = getObject(s, 'state', 'terminated');
      if (waiting && waiting.reason) reason = String(waiting.reason);
      else if (term && term.reason) reason = String(term.reason);
      else if (term) reason = term.signal ? `Signal:${String(term.signal)}` : `ExitCode:${String(term.exitCode)}`;
      else if (get(s, 'ready') === true && getObject(s, 'state', 'running')) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) reason = hasCondition(o, 'Ready') ? 'Running' : 'NotReady';
  }
  if (o.metadata?.deletionTimestamp) reason = getString(o, 'status', 'reason') === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

function readinessGates(o: ApiObject): string {
  const gates = getArray(o, 'spec', 'readinessGates');
  if (gates.length === 0) return '<none>';
  const met = gates.filter((g) => hasCondition(o, String(get(g, 'conditionType')))).length;
  return `${met}/${gates.length}`;
}
