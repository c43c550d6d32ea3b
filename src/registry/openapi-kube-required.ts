// The `required` lists of kube 1.32's OpenAPI for the structures whose orch
// schema requires less (or more) than kube publishes. orch's schemas drive its
// validation, and there `required` means "refused when absent"; kube's
// OpenAPI marks every member without omitempty required, though kube decodes
// an absent one to its Go zero value (written back: `"message": ""`) or
// refuses it in handwritten validation (`weight`: must be in the range 1-100).
// The served documents carry kube's lists, so a client that generates or
// validates from them sees what kube's answers guarantee (docs/schemas.md).
// Names are relative to the reversed API domain (`io.k8s.`).

import type { Json } from './openapi-schema.js';

/** one definition a line: its name, then kube's required members (none: kube requires nothing) */
const KUBE_REQUIRED_TABLE = `
api.apps.v1.DaemonSetStatus currentNumberScheduled desiredNumberScheduled numberMisscheduled numberReady
api.authorization.v1.NonResourceRule verbs
api.authorization.v1.ResourceRule verbs
api.autoscaling.v1.HorizontalPodAutoscalerStatus currentReplicas desiredReplicas
api.autoscaling.v2.ContainerResourceMetricStatus container current name
api.autoscaling.v2.ExternalMetricStatus current metric
api.autoscaling.v2.HorizontalPodAutoscalerStatus desiredReplicas
api.autoscaling.v2.ObjectMetricStatus current describedObject metric
api.autoscaling.v2.PodsMetricStatus current metric
api.autoscaling.v2.ResourceMetricStatus current name
api.batch.v1.PodFailurePolicy rules
api.batch.v1.PodFailurePolicyOnExitCodesRequirement operator values
api.batch.v1.PodFailurePolicyOnPodConditionsPattern status type
api.batch.v1.PodFailurePolicyRule action
api.batch.v1.SuccessPolicy rules
api.certificates.v1.CertificateSigningRequest spec
api.certificates.v1.CertificateSigningRequestCondition status type
api.core.v1.AppArmorProfile type
api.core.v1.Binding target
api.core.v1.ContainerResizePolicy resourceName restartPolicy
api.core.v1.EphemeralVolumeSource
api.core.v1.ISCSIPersistentVolumeSource iqn lun targetPortal
api.core.v1.ISCSIVolumeSource iqn lun targetPortal
api.core.v1.LinuxContainerUser gid uid
api.core.v1.NodeSelector nodeSelectorTerms
api.core.v1.NodeSelectorRequirement key operator
api.core.v1.PodAffinityTerm topologyKey
api.core.v1.PodResourceClaim name
api.core.v1.PodResourceClaimStatus name
api.core.v1.PreferredSchedulingTerm preference weight
api.core.v1.ResourceHealth resourceID
api.core.v1.ResourceStatus name
api.core.v1.ScaleIOPersistentVolumeSource gateway secretRef system
api.core.v1.ScaleIOVolumeSource gateway secretRef system
api.core.v1.ScopedResourceSelectorRequirement operator scopeName
api.core.v1.TopologySelectorLabelRequirement key values
api.core.v1.TopologySpreadConstraint maxSkew topologyKey whenUnsatisfiable
api.core.v1.TypedObjectReference kind name
api.core.v1.VolumeDevice devicePath name
api.core.v1.VolumeMountStatus mountPath name
api.core.v1.WeightedPodAffinityTerm podAffinityTerm weight
api.discovery.v1.ForZone name
api.flowcontrol.v1.FlowDistinguisherMethod type
api.flowcontrol.v1.FlowSchemaCondition
api.flowcontrol.v1.FlowSchemaSpec priorityLevelConfiguration
api.flowcontrol.v1.GroupSubject name
api.flowcontrol.v1.LimitResponse type
api.flowcontrol.v1.NonResourcePolicyRule nonResourceURLs verbs
api.flowcontrol.v1.PolicyRulesWithSubjects subjects
api.flowcontrol.v1.PriorityLevelConfigurationCondition
api.flowcontrol.v1.PriorityLevelConfigurationReference name
api.flowcontrol.v1.PriorityLevelConfigurationSpec type
api.flowcontrol.v1.ResourcePolicyRule apiGroups resources verbs
api.flowcontrol.v1.ServiceAccountSubject name namespace
api.flowcontrol.v1.Subject kind
api.flowcontrol.v1.UserSubject name
api.networking.v1.IngressClassParametersReference kind name
api.networking.v1.NetworkPolicySpec podSelector
api.node.v1.RuntimeClass handler
api.policy.v1.PodDisruptionBudgetStatus currentHealthy desiredHealthy disruptionsAllowed expectedPods
api.storage.v1.CSINodeDriver name nodeID
api.storage.v1.CSIStorageCapacity storageClassName
api.storage.v1.VolumeAttachmentSpec attacher nodeName source
apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition jsonPath name type
apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion strategy
apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition status type
apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion conversionReviewVersions
apimachinery.pkg.apis.meta.v1.Condition lastTransitionTime message reason status type
apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement key operator
`;

const KUBE_REQUIRED: ReadonlyMap<string, string[]> = new Map(
  KUBE_REQUIRED_TABLE.trim().split('\n').map((line) => {
    const [name, ...required] = line.split(' ');
    return [name!, required];
  }),
);

/** sets the `required` of each listed definition present in `out` to kube's (none: removed) */
export function publishKubeRequired(out: Json, rev: string): void {
  for (const [rel, required] of KUBE_REQUIRED) {
    const def = out[`${rev}.${rel}`] as Json | undefined;
    if (!def) continue;
    if (required.length > 0) def.required = [...required];
    else delete def.required;
  }
}
