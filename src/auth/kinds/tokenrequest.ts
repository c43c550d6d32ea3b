// The TokenRequest sub-resource `serviceaccounts/{name}/token` (spec 001 §5.5):
// POST a TokenRequest, get back a signed service-account token with the
// requested audiences and lifetime. Added to the ServiceAccount definition at
// composition time as a `create` capability (src/registry/capabilities.ts):
// the endpoint layer decodes the TokenRequest body; nothing is stored.

import { StatusError, badRequest, forbidden, invalid } from '../../core/errors.js';
import { nodeNameOf } from '../authz/node/authorizer.js';
import type { Capabilities } from '../../registry/capabilities.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../../registry/types.js';
import type { BoundObject, ObjectRef, ServiceAccountTokenIssuer } from '../authn/serviceaccount.js';
import type { ObjectGetter } from '../authn/objects.js';
import { authenticationGroup } from './reviews.js';

export interface TokenRequestOptions {
  apiDomain: string;
  issuer: ServiceAccountTokenIssuer;
  /** default audiences: the API server's (`--api-audiences`, default the issuer) */
  apiAudiences: string[];
  /** `--service-account-max-token-expiration`; undefined = no cap */
  maxExpirationSeconds?: number;
  objects: ObjectGetter;
  /**
   * NodeRestriction is enabled (spec 001 §5.15): a node's token must be bound
   * to a pod (name and uid) scheduled on that node (kube's admitServiceAccount)
   */
  nodeRestriction?: boolean;
}

export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;
export const MIN_TOKEN_EXPIRATION_SECONDS = 600;

/** the kinds a token may be bound to (spec 001 §5.5), by resource; Node is kube's ServiceAccountTokenNodeBinding, beta and on in 1.32 */
const BOUND_KINDS = { Node: 'nodes', Pod: 'pods', Secret: 'secrets' } as const;

/**
 * The node a pod is scheduled to, for its token's claim (kube's ServiceAccountTokenPodNodeInfo): a missing Node
 * still gives its name, so the token says where the pod was placed.
 */
function podNode(pod: ApiObject, objects: ObjectGetter): ObjectRef | undefined {
  const nodeName = (pod.spec as { nodeName?: unknown } | undefined)?.nodeName;
  if (typeof nodeName !== 'string' || nodeName === '') return undefined;
  return { name: nodeName, uid: objects('nodes', '', nodeName)?.metadata?.uid ?? '' };
}

export function withTokenRequest(def: ResourceDefinition, o: TokenRequestOptions): ResourceDefinition {
  if (def.group !== '' || def.resource !== 'serviceaccounts') return def;
  const subresources = def.subresources?.includes('token') ? def.subresources : [...(def.subresources ?? []), 'token'];
  return { ...def, subresources, capabilities: { ...(def.capabilities ?? {}), token: tokenRequestCapability(o) } };
}

function tokenRequestCapability(o: TokenRequestOptions): Capabilities {
  const group = authenticationGroup(o.apiDomain);
  return {
    // JSON, YAML or the protobuf envelope (the catalog knows TokenRequest); the endpoint checks the type meta
    body: { kind: { kind: 'TokenRequest', apiVersions: [`${group}/v1`, 'authentication.k8s.io/v1'] } },
    create: async (ctx, tr) => {
      const { namespace, name } = ctx;
      // 404 when the account does not exist (the store reports it)
      const sa = await ctx.store().get(namespace, name);
      const spec = (tr.spec ?? {}) as { audiences?: unknown; expirationSeconds?: unknown; boundObjectRef?: unknown };
      const errs: FieldError[] = [];
      let audiences = o.apiAudiences;
      if (spec.audiences !== undefined && spec.audiences !== null) {
        if (!Array.isArray(spec.audiences) || spec.audiences.some((a) => typeof a !== 'string' || a === '')) {
          errs.push({ field: 'spec.audiences', type: 'FieldValueInvalid', message: 'Invalid value: audiences must be non-empty strings' });
        } else if (spec.audiences.length > 0) audiences = spec.audiences as string[];
      }
      let exp = DEFAULT_TOKEN_EXPIRATION_SECONDS;
      if (spec.expirationSeconds !== undefined && spec.expirationSeconds !== null) {
        if (typeof spec.expirationSeconds !== 'number' || !Number.isInteger(spec.expirationSeconds)) {
          errs.push({ field: 'spec.expirationSeconds', type: 'FieldValueInvalid', message: 'Invalid value: must be an integer' });
        } else if (spec.expirationSeconds < MIN_TOKEN_EXPIRATION_SECONDS) {
          errs.push({ field: 'spec.expirationSeconds', type: 'FieldValueInvalid', message: `Invalid value: ${spec.expirationSeconds}: may not specify a duration less than 10 minutes` });
        } else if (spec.expirationSeconds > 2 ** 32) {
          errs.push({ field: 'spec.expirationSeconds', type: 'FieldValueTooLong', message: `Invalid value: ${spec.expirationSeconds}: may not specify a duration larger than 2^32 seconds` });
        } else exp = spec.expirationSeconds;
      }
      let bound: BoundObject | undefined;
      if (spec.boundObjectRef !== undefined && spec.boundObjectRef !== null) {
        const ref = spec.boundObjectRef as { kind?: unknown; name?: unknown; uid?: unknown };
        const kind = typeof ref.kind === 'string' && Object.hasOwn(BOUND_KINDS, ref.kind) ? (ref.kind as BoundObject['kind']) : undefined;
        if (!kind) {
          errs.push({ field: 'spec.boundObjectRef.kind', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(ref.kind ?? '')}: supported values: ${Object.keys(BOUND_KINDS).map((k) => JSON.stringify(k)).join(', ')}` });
        } else if (typeof ref.name !== 'string' || ref.name === '') {
          errs.push({ field: 'spec.boundObjectRef.name', type: 'FieldValueRequired', message: 'Required value' });
        } else {
          const resource = BOUND_KINDS[kind];
          const target = o.objects(resource, kind === 'Node' ? '' : namespace, ref.name);
          if (!target) throw new StatusError(404, 'NotFound', `${resource} "${ref.name}" not found`, { name: ref.name, kind: resource });
          if (typeof ref.uid === 'string' && ref.uid !== '' && ref.uid !== target.metadata?.uid) {
            throw new StatusError(409, 'Conflict', `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
          }
          bound = { kind, name: ref.name, uid: target.metadata?.uid ?? '' };
          if (kind === 'Pod') {
            const node = podNode(target, o.objects);
            if (node) bound.node = node;
          }
        }
      }
      if (errs.length > 0) throw invalid('TokenRequest', group, name, errs);
      if (o.nodeRestriction) restrictNode(ctx.user, name, spec.boundObjectRef, (pod) => o.objects('pods', namespace, pod));
      // kube's token REST: a token bound to a pod is only for the account that pod runs as
      if (bound?.kind === 'Pod') {
        const pod = o.objects('pods', namespace, bound.name) as { spec?: { serviceAccountName?: string } } | undefined;
        if ((pod?.spec?.serviceAccountName ?? '') !== name) {
          throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`);
        }
      }
      // longer requests are capped, as Kubernetes does, rather than refused
      if (o.maxExpirationSeconds !== undefined && exp > o.maxExpirationSeconds) exp = o.maxExpirationSeconds;
      const { token, expiresAt } = await o.issuer.issue({
        namespace,
        name,
        uid: sa.metadata?.uid ?? '',
        audiences,
        expirationSeconds: exp,
        ...(bound ? { boundObject: bound } : {}),
      });
      return {
        status: 201,
        object: {
          apiVersion: typeof tr.apiVersion === 'string' ? tr.apiVersion : `${group}/v1`,
          kind: 'TokenRequest',
          metadata: { name, namespace, creationTimestamp: new Date(expiresAt.getTime() - exp * 1000).toISOString().replace(/\.\d+Z$/, 'Z') },
          spec: { audiences, expirationSeconds: exp, boundObjectRef: spec.boundObjectRef ?? null },
          status: { token, expirationTimestamp: expiresAt.toISOString().replace(/\.\d+Z$/, 'Z') },
        },
      };
    },
  };
}

/** kube's NodeRestriction for `serviceaccounts/token` (admitServiceAccount): only for a pod on the node, named with its uid */
function restrictNode(user: { username: string; groups?: string[] }, name: string, ref: unknown, pod: (name: string) => { metadata?: { uid?: string }; spec?: unknown } | undefined): void {
  const node = nodeNameOf(user);
  if (node === undefined) return;
  const deny = (why: string): never => {
    throw forbidden(`serviceaccounts ${JSON.stringify(name)} is forbidden: ${why}`, { name, kind: 'serviceaccounts' });
  };
  const r = (ref ?? {}) as { apiVersion?: unknown; kind?: unknown; name?: unknown; uid?: unknown };
  if (r.apiVersion !== 'v1' || r.kind !== 'Pod' || typeof r.name !== 'string' || r.name === '') return deny('node requested token not bound to a pod');
  if (typeof r.uid !== 'string' || r.uid === '') return deny('node requested token with a pod binding without a uid');
  const p = pod(r.name);
  if (!p) throw new StatusError(404, 'NotFound', `pods "${r.name}" not found`, { name: r.name, kind: 'pods' });
  if (p.metadata?.uid !== r.uid) deny(`the UID in the bound object reference (${r.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
  if ((p.spec as { nodeName?: string } | undefined)?.nodeName !== node) deny('node requested token bound to a pod scheduled on a different node');
}
