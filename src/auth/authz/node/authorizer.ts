// The Node authorizer (spec 001_bdb487117be0ea8a.txt §5.15): requests of node
// agents, user `system:node:<name>` in group `system:nodes`. Like kube it
// never denies: what it does not allow is "no opinion" with a reason, so a
// later authorizer (RBAC's `system:node` role) may still grant it.
//
// Unlike kube, the writes a node agent needs (its Node, its pods, events, its
// Lease, CSRs, reviews) are allowed here too, scoped to the node where the
// request names the object, so `--authorization-mode=Node` alone is enough
// for an agent; NodeRestriction admission checks the objects' content.

import type { Authorizer, Decision, RequestAttributes, RulesResult, SelectorRequirement } from '../types.js';
import type { UserInfo } from '../../types.js';
import type { NodeGraph, VertexKind } from './graph.js';
import { systemNamespacesOf } from '../../../core/product-names.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/** The node name of a node agent's identity, or undefined for anyone else (§5.15). */
export function nodeNameOf(user: { username: string; groups?: string[] }): string | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!(user.groups ?? []).includes(NODES_GROUP)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}

export interface NodeAuthorizerOptions {
  apiDomain: string;
  /** feature gate AuthorizeNodeWithSelectors (beta, default on, §5.15) */
  withSelectors: boolean;
}

const READ = new Set(['get', 'list', 'watch']);
const WRITE = new Set(['create', 'update', 'patch', 'delete']);

const allow = (reason: string): Decision => ({ decision: 'allow', reason });
const noOpinion = (reason: string): Decision => ({ decision: 'noOpinion', reason });

export class NodeAuthorizer implements Authorizer {
  /** where node heartbeats live (`orch-node-lease`, or kube's with --api-domain k8s.io) */
  private readonly nodeLeaseNamespace: string;

  constructor(
    private readonly graph: NodeGraph,
    private readonly opts: NodeAuthorizerOptions,
  ) {
    this.nodeLeaseNamespace = systemNamespacesOf(opts.apiDomain).nodeLease;
  }

  /**
   * SelfSubjectRulesReview: nothing for users that are not nodes (complete, so
   * the chain's answer stays complete); for a node its graph-dependent grants
   * cannot be listed as rules: incomplete, with kube's error (§5.15).
   */
  async rulesFor(user: UserInfo): Promise<RulesResult> {
    if (nodeNameOf(user) === undefined) return { resourceRules: [], nonResourceRules: [], incomplete: false };
    return { resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['node authorizer does not support user rule resolution'] };
  }

  async authorize(a: RequestAttributes): Promise<Decision> {
    const node = nodeNameOf(a.user);
    if (node === undefined) return { decision: 'noOpinion' };
    if (node === '') return noOpinion('unknown node');
    if (!a.isResourceRequest) return { decision: 'noOpinion' };
    const d = this.opts.apiDomain;
    const key = `${a.apiGroup}|${a.resource}`;
    switch (key) {
      case '|secrets':
        return this.readRelated(node, a, 'secret');
      case '|configmaps':
        return this.readRelated(node, a, 'configmap');
      case '|persistentvolumeclaims':
        return this.getRelated(node, a, 'pvc');
      case '|persistentvolumes':
        return this.getRelated(node, a, 'pv');
      case '|serviceaccounts':
        if (a.subresource === 'token' && a.verb === 'create') return this.related(node, a, 'serviceaccount', a.name);
        return noOpinion('can only create tokens for individual service accounts');
      case '|services':
      case '|endpoints':
        return READ.has(a.verb) && a.subresource === '' ? allow('node may read services and endpoints') : { decision: 'noOpinion' };
      case '|nodes':
        return this.nodes(node, a);
      case '|pods':
        return this.pods(node, a);
      case '|events':
      case `events.${d}|events`:
        return ['create', 'update', 'patch'].includes(a.verb) ? allow('node may write events') : { decision: 'noOpinion' };
      case `coordination.${d}|leases`:
        if (a.namespace === this.nodeLeaseNamespace && a.name === node && (READ.has(a.verb) || WRITE.has(a.verb))) return allow('own node lease');
        if (a.namespace === this.nodeLeaseNamespace && a.name === '' && a.verb === 'create') return allow('own node lease');
        return noOpinion(`node '${node}' can only access its own lease`);
      case `certificates.${d}|certificatesigningrequests`:
        return a.subresource === '' && (READ.has(a.verb) || a.verb === 'create') ? allow('TLS bootstrapping') : { decision: 'noOpinion' };
      case `authentication.${d}|tokenreviews`:
      case `authorization.${d}|subjectaccessreviews`:
        return a.verb === 'create' ? allow('delegated checks') : { decision: 'noOpinion' };
      default:
        return { decision: 'noOpinion' };
    }
  }

  /** get, or list/watch narrowed to one name by `fieldSelector=metadata.name=<x>` */
  private readRelated(node: string, a: RequestAttributes, kind: VertexKind): Decision {
    if (!READ.has(a.verb)) return noOpinion('can only read resources of this type');
    if (a.subresource !== '') return noOpinion('cannot read subresource');
    const name = a.verb === 'get' ? a.name : a.name || singleValue(a.fieldSelector, 'metadata.name');
    return this.related(node, a, kind, name);
  }

  private getRelated(node: string, a: RequestAttributes, kind: VertexKind): Decision {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource !== '') return noOpinion('cannot get subresource');
    return this.related(node, a, kind, a.name);
  }

  private related(node: string, a: RequestAttributes, kind: VertexKind, name: string | undefined): Decision {
    if (!name) return noOpinion('No Object name found');
    if (this.graph.hasRelationship(node, kind, a.namespace, name)) return allow('related to a pod bound to the node');
    return noOpinion(`no relationship found between node '${node}' and this object`);
  }

  private nodes(node: string, a: RequestAttributes): Decision {
    if (a.subresource === 'status') {
      if (a.verb !== 'update' && a.verb !== 'patch' && a.verb !== 'get') return { decision: 'noOpinion' };
      return a.name === node ? allow('own node status') : noOpinion(`node '${node}' cannot modify node '${a.name}'`);
    }
    if (a.subresource !== '') return { decision: 'noOpinion' };
    if (READ.has(a.verb)) {
      if (!this.opts.withSelectors) return allow('node may read nodes');
      const name = a.verb === 'get' ? a.name : a.name || singleValue(a.fieldSelector, 'metadata.name');
      if (name === node) return allow('own node');
      return noOpinion(`node '${node}' cannot read '${name ?? ''}', only its own Node object`);
    }
    // create names the node in the body, checked by NodeRestriction admission
    if (a.verb === 'create') return allow('node may register itself');
    if (WRITE.has(a.verb)) {
      return a.name === node ? allow('own node') : noOpinion(`node '${node}' cannot modify node '${a.name}'`);
    }
    return { decision: 'noOpinion' };
  }

  private pods(node: string, a: RequestAttributes): Decision {
    const bound = (): Decision =>
      this.graph.podOnNode(node, a.namespace, a.name) ? allow('pod bound to the node') : noOpinion(`no relationship found between node '${node}' and this object`);
    if (a.subresource === 'status') return a.verb === 'update' || a.verb === 'patch' || a.verb === 'get' ? bound() : { decision: 'noOpinion' };
    if (a.subresource === 'eviction') return a.verb === 'create' ? bound() : { decision: 'noOpinion' };
    if (a.subresource !== '') return { decision: 'noOpinion' };
    switch (a.verb) {
      case 'get':
        return this.opts.withSelectors ? bound() : allow('node may read pods');
      case 'list':
      case 'watch':
        if (!this.opts.withSelectors) return allow('node may read pods');
        if (singleValue(a.fieldSelector, 'spec.nodeName') === node) return allow('pods bound to the node');
        return noOpinion(`can only list/watch pods with spec.nodeName=${node} field selector`);
      case 'create':
        // a mirror pod; NodeRestriction admission checks it is bound here
        return allow('node may create mirror pods');
      case 'update':
      case 'patch':
      case 'delete':
        return bound();
      default:
        return { decision: 'noOpinion' };
    }
  }
}

/** the one value of `key=value` (or `key in (value)`) in a field selector */
function singleValue(reqs: SelectorRequirement[] | undefined, key: string): string | undefined {
  const r = reqs?.find((q) => q.key === key && (q.operator === 'In' || q.operator === '=' || q.operator === '=='));
  return r?.values?.length === 1 ? r.values[0] : undefined;
}
