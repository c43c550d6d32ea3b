// kube 1.32's per-container checks of ValidatePodSpec (pkg/apis/core/validation/
// validation.go): validateContainerPorts, checkHostPortConflicts, and
// validateLivenessProbe / validateReadinessProbe / validateStartupProbe /
// validateLifecycle over validateHandler. Errors are appended to the caller's
// list and paths built only for an error, so a valid container costs no garbage.

import { isValidPortName } from '../../machinery/schema/object-meta.js';
import type { FieldError, JSONValue } from '../types.js';
import { duplicate, forbidden, invalid, required } from './field-errors.js';

type Obj = Record<string, JSONValue>;
const isObj = (v: JSONValue | undefined): v is Obj => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const given = (v: JSONValue | undefined): boolean => v !== undefined && v !== null;

/** kube's validateContainerPorts: a name is an IANA_SVC_NAME, unique within the container; port numbers in range */
export function validateContainerPorts(ports: JSONValue | undefined, p: string, errs: FieldError[]): void {
  if (!Array.isArray(ports)) return;
  let names: Set<string> | undefined;
  for (let j = 0; j < ports.length; j++) {
    const port = ports[j];
    if (!isObj(port)) continue;
    const name = port.name;
    if (typeof name === 'string' && name !== '') {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) for (const m of msgs) errs.push(invalid(`${p}.ports[${j}].name`, name, m));
      else if ((names ??= new Set()).has(name)) errs.push(duplicate(`${p}.ports[${j}].name`, name));
      else names.add(name);
    }
    const cp = port.containerPort;
    if (cp === 0) errs.push(required(`${p}.ports[${j}].containerPort`));
    else if (typeof cp === 'number' && (cp < 1 || cp > 65535)) errs.push(invalid(`${p}.ports[${j}].containerPort`, cp, PORT_RANGE));
    const hp = port.hostPort;
    if (typeof hp === 'number' && hp !== 0 && (hp < 1 || hp > 65535)) errs.push(invalid(`${p}.ports[${j}].hostPort`, hp, PORT_RANGE));
  }
}

/**
 * kube's AccumulateUniqueHostPorts: each `<protocol>/<hostIP>/<hostPort>` once among `containers`
 * (all regular containers together; each init container alone, as they run one by one)
 */
export function checkHostPortConflicts(containers: readonly Obj[], at: string, errs: FieldError[], from = 0, to = containers.length): void {
  let seen: Set<string> | undefined;
  for (let i = from; i < to; i++) {
    const ports = containers[i]?.ports;
    if (!Array.isArray(ports)) continue;
    for (let j = 0; j < ports.length; j++) {
      const port = ports[j];
      if (!isObj(port) || typeof port.hostPort !== 'number' || port.hostPort === 0) continue;
      const key = `${typeof port.protocol === 'string' ? port.protocol : ''}/${typeof port.hostIP === 'string' ? port.hostIP : ''}/${port.hostPort}`;
      if ((seen ??= new Set()).has(key)) errs.push(duplicate(`${at}[${i}].ports[${j}].hostPort`, key));
      else seen.add(key);
    }
  }
}

/** kube's ValidatePortNumOrName for an IntOrString port */
function validatePortNumOrName(port: JSONValue | undefined, at: string, errs: FieldError[]): void {
  if (typeof port === 'number') {
    if (port < 1 || port > 65535) errs.push(invalid(at, port, PORT_RANGE));
  } else if (typeof port === 'string') {
    for (const m of isValidPortName(port)) errs.push(invalid(at, port, m));
  }
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;

/** kube's validateHandler: exactly one handler, the later ones named in kube's order; each handler's own checks */
function validateHandler(h: Obj, kinds: readonly string[], p: string, errs: FieldError[]): void {
  let n = 0;
  for (const k of kinds) {
    const v = h[k];
    if (!given(v)) continue;
    if (n > 0) {
      errs.push(forbidden(`${p}.${k}`, 'may not specify more than 1 handler type'));
      continue;
    }
    n++;
    if (!isObj(v)) continue;
    // httpGet's path is defaulted ("/") and its scheme an enum of the schema
    if (k === 'exec') {
      if (!Array.isArray(v.command) || v.command.length === 0) errs.push(required(`${p}.exec.command`));
    } else if (k === 'httpGet' || k === 'tcpSocket') validatePortNumOrName(v.port, `${p}.${k}.port`, errs);
    else if (k === 'grpc') validatePortNumOrName(typeof v.port === 'number' ? v.port : 0, `${p}.grpc.port`, errs);
  }
  if (n === 0) errs.push(required(p, 'must specify a handler type'));
}

const PROBE_COUNTERS = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const;

/**
 * kube's validateProbe, plus validateLivenessProbe / validateStartupProbe (successThreshold must be 1) or
 * validateReadinessProbe (no terminationGracePeriodSeconds)
 */
function validateProbe(probe: JSONValue | undefined, readiness: boolean, p: string, errs: FieldError[]): void {
  if (!isObj(probe)) return;
  validateHandler(probe, PROBE_HANDLERS, p, errs);
  for (const f of PROBE_COUNTERS) {
    const v = probe[f];
    if (typeof v === 'number' && v < 0) errs.push(invalid(`${p}.${f}`, v, 'must be greater than or equal to 0'));
  }
  const grace = probe.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace <= 0) errs.push(invalid(`${p}.terminationGracePeriodSeconds`, grace, 'must be greater than 0'));
  if (readiness) {
    if (given(grace)) errs.push(invalid(`${p}.terminationGracePeriodSeconds`, grace, 'must not be set for readinessProbes'));
  } else if (probe.successThreshold !== 1 && probe.successThreshold !== 0 && given(probe.successThreshold)) {
    // 0 is Go's unset value, which kube's SetDefaults_Probe makes 1
    errs.push(invalid(`${p}.successThreshold`, probe.successThreshold, 'must be 1'));
  }
}

/** the probes and lifecycle hooks of a container that may have them (a regular container or a sidecar) */
export function validateProbesAndHooks(c: Obj, p: string, errs: FieldError[]): void {
  validateProbe(c.livenessProbe, false, `${p}.livenessProbe`, errs);
  validateProbe(c.readinessProbe, true, `${p}.readinessProbe`, errs);
  validateProbe(c.startupProbe, false, `${p}.startupProbe`, errs);
  const lc = c.lifecycle;
  if (!isObj(lc)) return;
  if (isObj(lc.postStart)) validateHandler(lc.postStart, LIFECYCLE_HANDLERS, `${p}.lifecycle.postStart`, errs);
  if (isObj(lc.preStop)) validateHandler(lc.preStop, LIFECYCLE_HANDLERS, `${p}.lifecycle.preStop`, errs);
}
