// core/v1 Pod. The PodSpec/PodStatus structures live in core-types.ts; this
// file holds the kind's strategy: image pull policy defaulting, initial status,
// container/volume/port rules, spec immutability, kubectl's Table columns.

import { isDNS1123Label } from '../../machinery/schema/object-meta.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { column, fieldOf, get, getArray, getObject, getString } from './columns.js';
import { ref } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { BINDING_SUBRESOURCE, bindingCapability } from './pod-binding.js';
import { evictionCapability } from './pod-eviction.js';
import { aliasServiceAccount, defaultHostNetworkPorts, defaultProbeZeros, defaultRequestsFromLimits, defaultVolumeSources, validateContainerResources } from './pod-resources.js';
import { EPHEMERAL_SUBRESOURCE, validateEphemeralContainersUpdate, validateNoEphemeralOnCreate } from './pod-ephemeral.js';
import { containersOf, validatePod } from './pod-validation.js';
import { allowsHostSysctls } from './pod-sysctls.js';
import { POD_SPEC_SHAPE } from '../zero-shape.js';
import { forbidden, invalid } from './field-errors.js';
import { deepEqual } from '../../machinery/meta.js';

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
      zeroShape: { spec: POD_SPEC_SHAPE, status: {} },
      default: defaultPod,
      prepareForCreate: (o) => {
        o.status = { phase: 'Pending', qosClass: qosClass(o) };
      },
      validate: (o) => [...validatePod(o), ...validateNoEphemeralOnCreate(o)],
      // kube's status strategy validates no spec (a status write keeps the stored one) and pods/binding
      // writes past the strategy (kube's setPodHostAndAnnotations); the ephemeralcontainers sub-resource
      // changes only spec.ephemeralContainers (confineWrite), the main resource never
      validateUpdate: (o, old, sub) => {
        if (sub === 'status' || sub === BINDING_SUBRESOURCE) return [];
        const spec = validatePod(o, { allowHostSysctls: allowsHostSysctls(getObject(old, 'spec')) });
        return [...spec, ...(sub === EPHEMERAL_SUBRESOURCE ? validateEphemeralContainersUpdate(o, old) : validatePodUpdate(o, old))];
      },
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

/** Kubernetes' pod-only defaults: imagePullPolicy from the image tag, volume sources, requests from limits, service links, host network ports */
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
  defaultVolumeSources(spec);
  defaultProbeZeros(spec);
  defaultRequestsFromLimits(spec);
  // SetDefaults_Pod, not SetDefaults_PodSpec: a workload's template gets neither
  if (spec) spec.enableServiceLinks ??= true;
  defaultHostNetworkPorts(spec);
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

const MAX_INT32 = 2147483647;

/**
 * kube's ValidatePodUpdate: activeDeadlineSeconds may be set, or lowered to 0 or more, never raised or
 * removed (a node agent fails the pod once it ran that long; a raise would revive a pod it already failed);
 * a bad value or a raise ends the update checks there, as in kube
 */
function validateDeadlineUpdate(o: ApiObject, old: ApiObject): { errs: FieldError[]; stop: boolean } {
  const now = get(o.spec, 'activeDeadlineSeconds');
  const was = get(old.spec, 'activeDeadlineSeconds');
  const f = 'spec.activeDeadlineSeconds';
  if (typeof now === 'number') {
    if (now < 0 || now > MAX_INT32) return { errs: [invalid(f, now, `must be between 0 and ${MAX_INT32}, inclusive`)], stop: true };
    return typeof was === 'number' && was < now ? { errs: [invalid(f, now, 'must be less than or equal to previous value')], stop: true } : { errs: [], stop: false };
  }
  return { errs: typeof was === 'number' ? [invalid(f, null, 'must not update from a positive integer to nil value')] : [], stop: false };
}

/**
 * kube's validateOnlyAddedTolerations: tolerations may be added, and an existing one's tolerationSeconds
 * changed, but none removed or otherwise changed (one error for the list, as kube stops at the first)
 */
function validateTolerationUpdate(o: ApiObject, old: ApiObject): FieldError[] {
  const identity = (t: JSONValue): string => JSON.stringify(['key', 'operator', 'value', 'effect'].map((f) => get(t, f) ?? ''));
  const kept = new Set(getArray(o, 'spec', 'tolerations').map(identity));
  if (getArray(old, 'spec', 'tolerations').every((t) => kept.has(identity(t)))) return [];
  return [forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
}

/** kube's validateOnlyDeletedSchedulingGates: gates may be removed (to release the pod), never added */
function validateSchedulingGateUpdate(o: ApiObject, old: ApiObject): FieldError[] {
  const gates = getArray(o, 'spec', 'schedulingGates');
  if (gates.length === 0) return [];
  const had = new Set(getArray(old, 'spec', 'schedulingGates').map((g) => get(g, 'name')));
  const errs: FieldError[] = [];
  gates.forEach((g, i) => {
    const name = get(g, 'name');
    if (!had.has(name)) errs.push(forbidden(`spec.schedulingGates[${i}].name`, `only deletion is allowed, but found new scheduling gate '${String(name)}'`));
  });
  return errs;
}

const UPDATABLE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * kube's ValidatePodUpdate beyond the spec's own validation: the same containers (images may change),
 * activeDeadlineSeconds, tolerations and scheduling gates by their rules, and nothing else of the spec —
 * not nodeName (binding is pods/binding's) nor terminationGracePeriodSeconds (but negative → 1)
 */
function validatePodUpdate(o: ApiObject, old: ApiObject): FieldError[] {
  for (const f of ['containers', 'initContainers']) {
    if (getArray(o, 'spec', f).length !== getArray(old, 'spec', f).length) return [forbidden(`spec.${f}`, 'pod updates may not add or remove containers')];
  }
  const deadline = validateDeadlineUpdate(o, old);
  if (deadline.stop) return deadline.errs;
  const errs = [...deadline.errs, ...validateTolerationUpdate(o, old), ...validateSchedulingGateUpdate(o, old)];
  // the common update (metadata, a finalizer) leaves the spec as it was: no copies
  if (deepEqual(o.spec, old.spec)) return errs;
  const oldGrace = get(old.spec, 'terminationGracePeriodSeconds');
  const graceToOne = typeof oldGrace === 'number' && oldGrace < 0 && get(o.spec, 'terminationGracePeriodSeconds') === 1;
  const mutable = (spec: JSONValue | undefined): string => {
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return JSON.stringify(spec ?? null);
    const s = structuredClone(spec) as Obj;
    // kube defaults the stored object as it reads it: one written before a default existed compares defaulted
    aliasServiceAccount(s);
    defaultProbeZeros(s);
    defaultRequestsFromLimits(s);
    defaultHostNetworkPorts(s);
    for (const f of ['containers', 'initContainers']) {
      const arr = s[f];
      if (Array.isArray(arr)) for (const c of arr) if (c && typeof c === 'object' && !Array.isArray(c)) delete c.image;
    }
    delete s.activeDeadlineSeconds;
    delete s.tolerations;
    delete s.schedulingGates;
    if (graceToOne) delete s.terminationGracePeriodSeconds;
    return JSON.stringify(sortKeys(pruneEmpty(s) ?? {}));
  };
  if (mutable(old.spec as JSONValue) !== mutable(o.spec as JSONValue)) errs.push(forbidden('spec', UPDATABLE));
  return errs;
}

/**
 * drops empty objects and arrays, as kube's Semantic.DeepEqual sees them: a
 * Go struct field (a container's `resources: {}`, which kube's JSON always
 * carries) and an empty map or slice equal an absent one
 */
function pruneEmpty(v: JSONValue): JSONValue | undefined {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map((x) => pruneEmpty(x) ?? {});
  if (v === null || typeof v !== 'object') return v;
  const out: Obj = {};
  for (const [k, child] of Object.entries(v)) {
    const p = pruneEmpty(child);
    if (p !== undefined) out[k] = p;
  }
  return Object.keys(out).length === 0 ? undefined : out;
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

/**
 * kubectl's walk over the init container statuses (printPod): an init container that exited 0, or a
 * sidecar (restartPolicy Always) that has started, is done; the first other one means the pod is still
 * initializing. Sidecars count in READY (started and ready ones) and RESTARTS.
 */
function initProgress(o: ApiObject): { initializing: boolean; sidecars: number; readySidecars: number; initRestarts: number; sidecarRestarts: number } {
  const specs = getArray(o, 'spec', 'initContainers');
  const sidecar = (name: JSONValue | undefined) => specs.some((c) => get(c, 'name') === name && get(c, 'restartPolicy') === 'Always');
  const out = { initializing: false, sidecars: specs.filter((c) => get(c, 'restartPolicy') === 'Always').length, readySidecars: 0, initRestarts: 0, sidecarRestarts: 0 };
  // as kubectl, the walk (and its restart counts) ends at the first init container still initializing
  for (const s of getArray(o, 'status', 'initContainerStatuses')) {
    const restarts = get(s, 'restartCount');
    const n = typeof restarts === 'number' ? restarts : 0;
    out.initRestarts += n;
    if (sidecar(get(s, 'name'))) out.sidecarRestarts += n;
    if (get(s, 'state', 'terminated', 'exitCode') === 0) continue;
    if (sidecar(get(s, 'name')) && get(s, 'started') === true) {
      if (get(s, 'ready') === true) out.readySidecars++;
      continue;
    }
    out.initializing = true;
    break;
  }
  return out;
}

function podReady(o: ApiObject): string {
  const init = initProgress(o);
  let ready = init.readySidecars;
  if (!init.initializing || hasCondition(o, 'Initialized')) {
    for (const s of getArray(o, 'status', 'containerStatuses')) {
      if (get(s, 'ready') === true && get(s, 'state', 'running') !== undefined) ready++;
    }
  }
  return `${ready}/${getArray(o, 'spec', 'containers').length + init.sidecars}`;
}

/** kubectl's RESTARTS: the init containers' while initializing, then the sidecars' and the containers' */
function podRestarts(o: ApiObject): number {
  const init = initProgress(o);
  if (init.initializing && !hasCondition(o, 'Initialized')) return init.initRestarts;
  let r = init.sidecarRestarts;
  for (const s of getArray(o, 'status', 'containerStatuses')) {
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
