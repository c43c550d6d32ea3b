// The behaviour per path of the webhook server Kubernetes' admission e2e tests
// deploy (agnhost's `webhook` command, kubernetes/kubernetes
// test/images/agnhost/webhook), installed on the in-process webhook of
// admission-webhook.ts: each path answers as agnhost's handler does — denies
// with its message or reason, patches with its JSONPatch, sleeps five
// seconds, or never answers.

import type { ServerResponse } from 'node:http';
import { type AdmissionAnswer, type AdmissionBehaviour, type AdmissionWebhook, type SeenAdmission, sendReview } from './admission-webhook.js';

type Obj = Record<string, any>;
type Review = SeenAdmission['review'];
type Answer = AdmissionAnswer;
const send = sendReview;

const allow: Answer = { allowed: true };
/** agnhost's toV1AdmissionResponse: a refusal carrying the error as message */
const refuse = (message: string): Answer => ({ allowed: false, status: { message } });
const req = (r: Review): Obj => r.request as Obj;
const isResource = (r: Review, group: string, version: string, resource: string): boolean => {
  const res = (req(r).resource ?? {}) as Obj;
  return res.group === group && res.version === version && res.resource === resource;
};
/** the object a handler reads: the old one on DELETE */
const subject = (r: Review): Obj => ((req(r).operation === 'DELETE' ? req(r).oldObject : req(r).object) ?? {}) as Obj;

/** configmaps.go admitConfigMaps and customresource.go admitCustomResource: deny by a data key, with a reason */
function denyByData(what: string): (r: Review) => Answer {
  return (r) => {
    const op = req(r).operation;
    const v = (subject(r).data ?? {})['webhook-e2e-test'];
    if (v === 'webhook-disallow' && (op === 'CREATE' || op === 'UPDATE')) return { allowed: false, status: { reason: `the ${what} contains unwanted ${what === 'configmap' ? 'key and value' : 'data'}` } };
    if (v === 'webhook-nondeletable' && op === 'DELETE') return { allowed: false, status: { reason: `the ${what} cannot be deleted because it contains unwanted key and value` } };
    return allow;
  };
}

/** configmaps.go mutateConfigmaps / customresource.go mutateCustomResource: the later stage's patch wins */
function mutateStages(r: Review): Answer {
  const data = ((req(r).object ?? {}) as Obj).data ?? {};
  let patch: Obj[] | undefined;
  if (data['mutation-start'] === 'yes') patch = [{ op: 'add', path: '/data/mutation-stage-1', value: 'yes' }];
  if (data['mutation-stage-1'] === 'yes') patch = [{ op: 'add', path: '/data/mutation-stage-2', value: 'yes' }];
  return { allowed: true, patch };
}

/** pods.go admitPods; `wait-forever` never answers */
function admitPods(r: Review, res: ServerResponse): void {
  if (!isResource(r, '', 'v1', 'pods')) return send(res, r, refuse('expect resource to be { v1 pods}'));
  const pod = (req(r).object ?? {}) as Obj;
  let msg = '';
  const label = pod.metadata?.labels?.['webhook-e2e-test'];
  if (label === 'webhook-disallow') msg += 'the pod contains unwanted label; ';
  if (label === 'wait-forever') return;
  for (const c of (pod.spec?.containers ?? []) as Obj[]) if (String(c.name).includes('webhook-disallow')) msg += 'the pod contains unwanted container name; ';
  send(res, r, msg ? { allowed: false, status: { message: msg.trim() } } : allow);
}

/** pods.go mutatePods: an init container for the pod `webhook-to-be-mutated` */
function mutatePods(r: Review): Answer {
  const pod = (req(r).object ?? {}) as Obj;
  const has = ((pod.spec?.initContainers ?? []) as Obj[]).some((c) => c.name === 'webhook-added-init-container');
  if (pod.metadata?.name !== 'webhook-to-be-mutated' || has) return allow;
  return { allowed: true, patch: [{ op: 'add', path: '/spec/initContainers', value: [{ image: 'webhook-added-image', name: 'webhook-added-init-container', resources: {} }] }] };
}

/** pods.go denySpecificAttachment: `kubectl attach to-be-attached-pod -i -c=container1` */
function denyAttach(r: Review): Answer {
  if (req(r).name !== 'to-be-attached-pod') return allow;
  if (!isResource(r, '', 'v1', 'pods')) return refuse(`expect resource to be { v1 pods}, got ${JSON.stringify(req(r).resource)}`);
  if (req(r).subResource !== 'attach') return refuse(`expect subresource to be attach, got ${String(req(r).subResource)}`);
  const o = (req(r).object ?? {}) as Obj;
  if (!o.stdin || o.container !== 'container1') return allow;
  return refuse("attaching to pod 'to-be-attached-pod' is not allowed");
}

/** addlabel.go: the label added-label=yes */
function addLabel(r: Review): Answer {
  const labels = (((req(r).object ?? {}) as Obj).metadata?.labels ?? {}) as Record<string, string>;
  if (Object.keys(labels).length === 0) return { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { 'added-label': 'yes' } }] };
  if (!('added-label' in labels)) return { allowed: true, patch: [{ op: 'add', path: '/metadata/labels/added-label', value: 'yes' }] };
  if (labels['added-label'] !== 'yes') return { allowed: true, patch: [{ op: 'replace', path: '/metadata/labels/added-label', value: 'yes' }] };
  return allow;
}

/** crd.go admitCRD */
function admitCrd(r: Review): Answer {
  if (!isResource(r, 'apiextensions.k8s.io', 'v1', 'customresourcedefinitions') && !isResource(r, 'apiextensions.k8s.io', 'v1beta1', 'customresourcedefinitions')) {
    return refuse(`expect resource to be a customresourcedefinitions resource, got ${JSON.stringify(req(r).resource)}`);
  }
  const labels = (((req(r).object ?? {}) as Obj).metadata?.labels ?? {}) as Record<string, string>;
  return labels['webhook-e2e-test'] === 'webhook-disallow' ? refuse('the crd contains unwanted label') : allow;
}

const answering =
  (f: (r: Review) => Answer): AdmissionBehaviour =>
  (seen, res) =>
    send(res, seen.review, f(seen.review));

/** installs agnhost's paths on the webhook; `slowMs` is /always-allow-delay-5s's delay (agnhost: 5 s) */
export function serveAgnhost(hook: AdmissionWebhook, slowMs = 5000): void {
  hook.on.set('/always-allow-delay-5s', (seen, res) => {
    setTimeout(() => send(res, seen.review, { allowed: true, status: { message: 'this webhook allows all requests' } }), slowMs);
  });
  hook.on.set('/always-deny', answering(() => refuse('this webhook denies all requests')));
  hook.on.set('/add-label', answering(addLabel));
  hook.on.set('/pods', (seen, res) => admitPods(seen.review, res));
  hook.on.set('/pods/attach', answering(denyAttach));
  hook.on.set('/mutating-pods', answering(mutatePods));
  hook.on.set('/configmaps', answering(denyByData('configmap')));
  hook.on.set('/mutating-configmaps', answering(mutateStages));
  hook.on.set('/custom-resource', answering(denyByData('custom resource')));
  hook.on.set('/mutating-custom-resource', answering(mutateStages));
  hook.on.set('/crd', answering(admitCrd));
}
