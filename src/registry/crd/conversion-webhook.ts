// A CRD's conversion webhook (spec.conversion.strategy Webhook; spec 000 §9.3
// row 1.22; Kubernetes' webhookConverter): objects crossing versions are sent
// as one ConversionReview per batch (`request.uid`, `desiredAPIVersion`,
// `objects`) over the admission webhooks' HTTPS client (URL or Service,
// caBundle, keep-alive agents), and the answer is held to kube's rules: the
// review's kind and uid, `result.status` Success (else its message is the
// error), as many objects as were sent, each in the desired apiVersion, of
// the same kind, name, namespace and uid; of the metadata only labels and
// annotations may change (the rest is restored from the original). Errors
// carry kube's words ("conversion webhook for <gvk> failed: …").

import type { Clock } from '../../core/clock.js';
import type { FieldError, ObjectMeta } from '../../core/object.js';
import { validateLabelsAndAnnotations } from '../../machinery/schema/object-meta.js';
import type { ApiObject, AsyncConverter } from '../types.js';
import { type ServiceResolver, type WebhookAgents, postReview } from '../admission/webhook-client.js';
import { type ClientConfig, decodeCaBundle } from '../admission/webhook-config.js';

/** ConversionReview versions this server speaks (kube's acceptedConversionReviewVersions) */
export const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** kube's conversion webhook client has no timeout of its own beyond the REST client's 30 s */
const CONVERSION_TIMEOUT_MS = 30_000;
/** a review answers a whole list (kube's REST client has no cap): far above the admission answers' 3 MiB */
const MAX_CONVERSION_RESPONSE_BYTES = 256 * 1024 * 1024;

type J = Record<string, unknown>;
const isObj = (v: unknown): v is J => v !== null && typeof v === 'object' && !Array.isArray(v);

/** a failed conversion: the message is kube's; the caller picks the Status (reads and writes differ) */
export class ConversionWebhookError extends Error {}

export interface ConversionWebhookEnv {
  resolver: ServiceResolver;
  agents: WebhookAgents;
  clock: Clock;
  /** request uids (the composition root's randomness) */
  uid: () => string;
}

/** `spec.conversion` of a validated CRD, as stored */
export interface ConversionSpec {
  strategy?: string;
  webhook?: { clientConfig?: J; conversionReviewVersions?: string[] };
}

/** the client config of a CRD's conversion webhook (validated already: exactly one of url and service) */
export function conversionClientConfig(cc: J): ClientConfig {
  const svc = isObj(cc.service) ? cc.service : undefined;
  return {
    url: typeof cc.url === 'string' && cc.url !== '' ? cc.url : undefined,
    service: svc
      ? { namespace: String(svc.namespace ?? ''), name: String(svc.name ?? ''), path: typeof svc.path === 'string' ? svc.path : undefined, port: typeof svc.port === 'number' ? svc.port : 443 }
      : undefined,
    caPem: cc.caBundle === undefined ? undefined : decodeCaBundle(cc.caBundle),
  };
}

/** Go's GroupVersionKind.String(), as kube's messages print it */
function gvkText(apiVersion: string, kind: string): string {
  return `${apiVersion}, Kind=${kind}`;
}

/**
 * The converter of one CRD's webhook, or undefined when the CRD converts with None.
 * `kind` and `listKind` are the CRD's names (the messages name the list kind for a batch).
 */
export function webhookConverter(conversion: ConversionSpec | undefined, kind: string, env: ConversionWebhookEnv, listKind = `${kind}List`): AsyncConverter | undefined {
  if (conversion?.strategy !== 'Webhook' || !isObj(conversion.webhook?.clientConfig)) return undefined;
  const cc = conversionClientConfig(conversion.webhook.clientConfig);
  const reviewVersion = (conversion.webhook.conversionReviewVersions ?? []).find((v) => CONVERSION_REVIEW_VERSIONS.includes(v));
  return {
    async convert(objects, to, list = objects.length > 1) {
      const sent = objects.filter((o) => o.apiVersion !== to);
      if (sent.length === 0) return [...objects];
      const first = sent[0]!;
      const gvk = gvkText(String(first.apiVersion ?? ''), list ? listKind : String(first.kind ?? kind));
      if (reviewVersion === undefined) throw new ConversionWebhookError('no supported conversion review versions');
      const uid = env.uid();
      const review = {
        kind: 'ConversionReview',
        apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
        request: { uid, desiredAPIVersion: to, objects: sent },
      };
      let answer: unknown;
      try {
        answer = await postReview(cc, review, { resolver: env.resolver, timeoutMs: CONVERSION_TIMEOUT_MS, agents: env.agents, clock: env.clock, maxResponseBytes: MAX_CONVERSION_RESPONSE_BYTES });
      } catch (e) {
        // the admission client's words without its admission prefix: kube's REST client error (`Post "…": …`)
        throw new ConversionWebhookError(`conversion webhook for ${gvk} failed: ${(e as Error).message.replace(/^failed to call webhook: /, '')}`);
      }
      const converted = convertedObjects(answer, reviewVersion, uid, gvk);
      const checked = checkConverted(sent, converted, to, gvk, list);
      // objects already in the desired version were not sent and stay where they were
      let next = 0;
      return objects.map((o) => (o.apiVersion === to ? o : checked[next++]!));
    },
  };
}

/** kube's getConvertedObjectsFromResponse: the review's kind (v1), uid (v1), result and objects */
export function convertedObjects(answer: unknown, reviewVersion: string, uid: string, gvk: string): unknown[] {
  const failed = (why: string) => new ConversionWebhookError(`conversion webhook for ${gvk} failed: ${why}`);
  const review = isObj(answer) ? answer : {};
  if (reviewVersion === 'v1') {
    const got = `${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`;
    if (review.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview') {
      throw failed(`expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${got === ', Kind=' ? '/, Kind=' : got}`);
    }
  }
  const response = review.response;
  if (!isObj(response)) throw failed('no response provided');
  // v1beta1 reviews were never checked for their uid (kube keeps it so for compatibility)
  if (reviewVersion === 'v1' && response.uid !== uid) throw failed(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`);
  const result = isObj(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message !== '') throw failed(result.message);
    throw failed(`response.result.status was '${String(result.status ?? '')}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/**
 * kube's checks of the converted objects (count, groupVersion, kind, name, namespace, uid) and
 * restoreObjectMeta: the original's metadata with the converted labels and annotations.
 * Kube's index in these messages is the next one after the object's (it counts before checking).
 */
export function checkConverted(sent: readonly ApiObject[], converted: readonly unknown[], to: string, gvk: string, list: boolean): ApiObject[] {
  if (converted.length !== sent.length) {
    throw new ConversionWebhookError(list || converted.length > 1
      ? `conversion webhook for ${gvk} returned ${converted.length} objects, expected ${sent.length}`
      : `conversion webhook for ${gvk} failed, no objects returned`);
  }
  return sent.map((original, i) => {
    const invalid = (why: string, at = i + 1) =>
      new ConversionWebhookError(list ? `conversion webhook for ${gvk} returned invalid converted object at index ${at}: ${why}` : `conversion webhook for ${gvk} returned invalid object${why.startsWith('must') ? '' : ' at index 0'}: ${why}`);
    const c = converted[i];
    if (!isObj(c)) throw invalid('not an object', i);
    if (c.apiVersion !== to) throw invalid(`invalid groupVersion (expected ${to}, received ${String(c.apiVersion ?? '')})`);
    if (c.kind !== original.kind) throw invalid(`invalid kind (expected ${String(original.kind)}, received ${String(c.kind ?? '')})`);
    const om = original.metadata ?? {};
    const cm: ObjectMeta = isObj(c.metadata) ? (c.metadata as ObjectMeta) : {};
    for (const [field, a, b] of [['kind', original.kind, c.kind], ['name', om.name, cm.name], ['namespace', om.namespace, cm.namespace], ['UID', om.uid, cm.uid]] as const) {
      if ((a ?? '') !== (b ?? '')) throw invalid(`must have the same ${field}: ${String(a ?? '')} != ${String(b ?? '')}`);
    }
    try {
      return { ...c, metadata: restoredMeta(om, c.metadata) } as ApiObject;
    } catch (e) {
      if (!(e instanceof ConversionWebhookError)) throw e;
      throw new ConversionWebhookError(list
        ? `conversion webhook for ${gvk} returned invalid metadata in object at index ${i + 1}: ${e.message}`
        : `conversion webhook for ${gvk} returned invalid metadata: ${e.message}`);
    }
  });
}

/** kube's restoreObjectMeta: the original's metadata, the converted labels and annotations (validated when changed) */
function restoredMeta(original: ObjectMeta, converted: unknown): ObjectMeta {
  if (converted === undefined) throw new ConversionWebhookError('missing metadata in converted object');
  if (!isObj(converted)) throw new ConversionWebhookError(`invalid metadata of type ${typeof converted} in converted object`);
  const out: ObjectMeta = structuredClone(original);
  for (const f of ['labels', 'annotations'] as const) {
    const given = converted[f];
    if (given === undefined || given === null) {
      delete out[f];
      continue;
    }
    if (!isObj(given)) throw new ConversionWebhookError(`invalid metadata.${f} of type ${Array.isArray(given) ? 'array' : typeof given} in converted object`);
    const before = original[f] ?? {};
    let changed = Object.keys(before).length !== Object.keys(given).length;
    for (const [k, v] of Object.entries(given)) {
      if (typeof v !== 'string') throw new ConversionWebhookError(`metadata.${f}[${k}] must be a string, but is ${v === null ? 'nil' : typeof v} in converted object`);
      if (before[k] !== v) changed = true;
    }
    const map = given as Record<string, string>;
    if (changed) {
      // kube names the annotations' path metadata.annotation
      const errs = f === 'labels' ? validateLabelsAndAnnotations({ labels: map }, 'metadata') : annotationErrors(map);
      if (errs.length > 0) throw new ConversionWebhookError(aggregate(errs));
    }
    out[f] = map;
  }
  return out;
}

function annotationErrors(map: Record<string, string>): FieldError[] {
  return validateLabelsAndAnnotations({ annotations: map }, 'metadata').map((e) => ({ ...e, field: e.field.replace('metadata.annotations', 'metadata.annotation') }));
}

/** Go's ErrorList.ToAggregate().Error(): one error alone, several in brackets */
function aggregate(errs: FieldError[]): string {
  const texts = errs.map((e) => `${e.field}: ${e.message}`);
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
}
