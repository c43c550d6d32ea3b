// The built-in kinds. The API domain is a server option (default `orch.io`):
// every group carrying the product word is built from it, so that with
// `--api-domain k8s.io` unmodified Kubernetes clients use every group.

import { SchemaNames } from '../../machinery/schema/naming.js';
import type { Definitions } from '../../machinery/schema/types.js';
import type { ResourceDefinition } from '../types.js';
import { configMapDefinition } from './configmap.js';
import { coreDefinitions } from './core-types.js';
import { coreEventDefinition, eventsV1Definition } from './event.js';
import { leaseDefinition } from './lease.js';
import { metaDefinitions } from './meta.js';
import { namespaceDefinition } from './namespace.js';
import { nodeDefinition } from './node.js';
import { podDefinition } from './pod.js';
import { legacyBindingDefinition } from './pod-binding.js';
import { componentStatusDefinition } from './componentstatus.js';
import {
  clusterRoleBindingDefinition,
  clusterRoleDefinition,
  rbacDefinitions,
  roleBindingDefinition,
  roleDefinition,
} from './rbac.js';
import { secretDefinition } from './secret.js';
import { serviceDefinition } from './service.js';
import { serviceAccountDefinition } from './serviceaccount.js';
import { apiServiceDefinition } from './apiservice.js';
import { appsFactories } from './apps.js';
import { batchFactories } from './batch.js';
import { clusterPolicyFactories } from './cluster-policy.js';
import { coreExtraFactories } from './core-extra.js';
import { networkingFactories } from './networking.js';
import { runtimeClassDefinition } from './node-runtime.js';
import { storageCsiFactories } from './storage-csi.js';
import { flowControlFactories } from './flowcontrol.js';
import { workloadDefinitions } from './workload-shared.js';

export const DEFAULT_API_DOMAIN = 'orch.io';

const FACTORIES = [
  namespaceDefinition,
  configMapDefinition,
  secretDefinition,
  serviceAccountDefinition,
  podDefinition,
  legacyBindingDefinition,
  (n: SchemaNames) => componentStatusDefinition(n),
  serviceDefinition,
  nodeDefinition,
  coreEventDefinition,
  leaseDefinition,
  eventsV1Definition,
  roleDefinition,
  clusterRoleDefinition,
  roleBindingDefinition,
  clusterRoleBindingDefinition,
  ...appsFactories,
  ...batchFactories,
  ...coreExtraFactories,
  ...networkingFactories,
  ...clusterPolicyFactories,
  apiServiceDefinition,
  runtimeClassDefinition,
  ...storageCsiFactories,
  ...flowControlFactories,
];

/**
 * Kinds whose spec/status split uses `metadata.generation` in Kubernetes 1.32
 * (their strategies bump it on spec changes); the others carry none (issue #11).
 */
const GENERATION_KINDS = new Set([
  'Deployment',
  'ReplicaSet',
  'StatefulSet',
  'DaemonSet',
  'ReplicationController',
  'Job',
  'CronJob',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'Ingress',
  'IngressClass',
  'NetworkPolicy',
  'EndpointSlice',
]);

export function builtinDefinitions(apiDomain: string = DEFAULT_API_DOMAIN): ResourceDefinition[] {
  const n = new SchemaNames(apiDomain);
  return FACTORIES.map((f) => f(n)).map((d) => (GENERATION_KINDS.has(d.kind) ? { ...d, strategy: { ...d.strategy, tracksGeneration: true } } : d));
}

/** the shared `$ref` targets of the built-in kinds (ObjectMeta, PodSpec, PolicyRule, ...) */
export function builtinSchemaDefinitions(apiDomain: string = DEFAULT_API_DOMAIN): Definitions {
  const n = new SchemaNames(apiDomain);
  return { ...metaDefinitions(n), ...coreDefinitions(n), ...rbacDefinitions(n), ...workloadDefinitions(n) };
}

/** well-known group names for an API domain */
export function builtinGroups(apiDomain: string = DEFAULT_API_DOMAIN): { rbac: string; coordination: string; events: string; meta: string } {
  return {
    rbac: `rbac.authorization.${apiDomain}`,
    coordination: `coordination.${apiDomain}`,
    events: `events.${apiDomain}`,
    meta: `meta.${apiDomain}`,
  };
}

/** alias used by the server composition */
export const sharedDefinitions = builtinSchemaDefinitions;
