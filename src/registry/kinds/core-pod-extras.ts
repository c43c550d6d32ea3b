// core/v1 structures of the pod spec and status that used to be opaque:
// scheduling constraints (affinity, topology spread), claims, block devices,
// resize policies, Windows/AppArmor options and the newer container status
// fields. They carry their generated.proto field numbers (spec 000 §2.7):
// an opaque property has no protobuf form, so a client-go client writing a
// Deployment with affinity in protobuf lost it (docs/protobuf.md, audit).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Definitions, Schema } from '../../machinery/schema/types.js';
import { atomicList, bool, int32, int64, listMap, obj, proto, ref, str } from '../../machinery/schema/dsl.js';

const strings = (description: string): Schema => atomicList(description, { type: 'string' });
const atomicStruct = { 'x-orch-map-type': 'atomic' } as const;

export function podExtraDefinitions(n: SchemaNames): Definitions {
  const c = (k: string): string => n.core(k);
  const selector = (d: string): Schema => ref(n.meta('LabelSelector'), d);
  const requirement = obj('A selector requirement: a key, an operator and values.', proto({ key: 1, operator: 2, values: 3 }, {
    key: str('The label key the selector applies to.'),
    operator: str('In, NotIn, Exists, DoesNotExist, Gt or Lt.'),
    values: strings('Values; one integer for Gt and Lt, none for Exists and DoesNotExist.'),
  }));
  return {
    [c('Affinity')]: obj('Scheduling constraints of the pod.', proto({ nodeAffinity: 1, podAffinity: 2, podAntiAffinity: 3 }, {
      nodeAffinity: ref(c('NodeAffinity'), 'Node affinity rules.'),
      podAffinity: ref(c('PodAffinity'), 'Pod affinity rules.'),
      podAntiAffinity: ref(c('PodAntiAffinity'), 'Pod anti-affinity rules.'),
    })),
    [c('NodeAffinity')]: obj('Node affinity scheduling rules.', proto({ requiredDuringSchedulingIgnoredDuringExecution: 1, preferredDuringSchedulingIgnoredDuringExecution: 2 }, {
      requiredDuringSchedulingIgnoredDuringExecution: ref(c('NodeSelector'), 'Nodes the pod must be scheduled onto.'),
      preferredDuringSchedulingIgnoredDuringExecution: atomicList('Weighted node preferences.', ref(c('PreferredSchedulingTerm'))),
    })),
    [c('NodeSelector')]: obj('The union (OR) of node selector terms.', proto({ nodeSelectorTerms: 1 }, {
      nodeSelectorTerms: atomicList('The terms, ORed.', ref(c('NodeSelectorTerm'))),
    }), undefined, atomicStruct),
    [c('NodeSelectorTerm')]: obj('Node selector requirements, ANDed.', proto({ matchExpressions: 1, matchFields: 2 }, {
      matchExpressions: atomicList("Requirements on the node's labels.", ref(c('NodeSelectorRequirement'))),
      matchFields: atomicList("Requirements on the node's fields.", ref(c('NodeSelectorRequirement'))),
    }), undefined, atomicStruct),
    [c('NodeSelectorRequirement')]: requirement,
    [c('PreferredSchedulingTerm')]: obj('A node selector term with a weight.', proto({ weight: 1, preference: 2 }, {
      weight: int32('Weight, 1-100.'),
      preference: ref(c('NodeSelectorTerm'), 'The node selector term.'),
    })),
    [c('PodAffinity')]: obj('Inter-pod affinity rules.', podAffinityFields(c)),
    [c('PodAntiAffinity')]: obj('Inter-pod anti-affinity rules.', podAffinityFields(c)),
    [c('PodAffinityTerm')]: obj('Pods (by label selector and namespaces) to be co-located with, or not.', proto({
      labelSelector: 1, namespaces: 2, topologyKey: 3, namespaceSelector: 4, matchLabelKeys: 5, mismatchLabelKeys: 6,
    }, {
      labelSelector: selector('The pods.'),
      namespaces: strings('Namespaces the term applies to.'),
      topologyKey: str('Node label key defining co-location.'),
      namespaceSelector: selector('Namespaces the term applies to, by label.'),
      matchLabelKeys: strings('Pod label keys merged into labelSelector as key in (value).'),
      mismatchLabelKeys: strings('Pod label keys merged into labelSelector as key notin (value).'),
    })),
    [c('WeightedPodAffinityTerm')]: obj('A pod affinity term with a weight.', proto({ weight: 1, podAffinityTerm: 2 }, {
      weight: int32('Weight, 1-100.'),
      podAffinityTerm: ref(c('PodAffinityTerm'), 'The term.'),
    })),
    [c('TopologySpreadConstraint')]: obj('How matching pods spread among a topology.', proto({
      maxSkew: 1, topologyKey: 2, whenUnsatisfiable: 3, labelSelector: 4, minDomains: 5, nodeAffinityPolicy: 6, nodeTaintsPolicy: 7, matchLabelKeys: 8,
    }, {
      maxSkew: int32('Maximum permitted skew.'),
      topologyKey: str('Node label key of the topology.'),
      whenUnsatisfiable: str('DoNotSchedule or ScheduleAnyway.'),
      labelSelector: selector('The pods counted.'),
      minDomains: int32('Minimum number of eligible domains.'),
      nodeAffinityPolicy: str('Honor or Ignore.'),
      nodeTaintsPolicy: str('Honor or Ignore.'),
      matchLabelKeys: strings('Pod label keys ANDed with labelSelector.'),
    })),
    [c('PodResourceClaim')]: obj('A resource claim of the pod.', proto({ name: 1, resourceClaimName: 3, resourceClaimTemplateName: 4 }, {
      name: str('Name of the claim inside the pod.'),
      resourceClaimName: str('An existing ResourceClaim.'),
      resourceClaimTemplateName: str('A ResourceClaimTemplate to create the claim from.'),
    })),
    [c('PodResourceClaimStatus')]: obj('The generated claim of a pod resource claim.', proto({ name: 1, resourceClaimName: 2 }, {
      name: str('Name of the claim inside the pod.'),
      resourceClaimName: str('Name of the generated ResourceClaim.'),
    })),
    [c('VolumeDevice')]: obj('A raw block device mapped into the container.', proto({ name: 1, devicePath: 2 }, {
      name: str('Name of a persistentVolumeClaim of the pod.'),
      devicePath: str('Path of the device inside the container.'),
    })),
    [c('ContainerResizePolicy')]: obj('Resize policy of one resource.', proto({ resourceName: 1, restartPolicy: 2 }, {
      resourceName: str('cpu or memory.'),
      restartPolicy: str('NotRequired or RestartContainer.'),
    })),
    [c('WindowsSecurityContextOptions')]: obj('Windows-specific options.', proto({ gmsaCredentialSpecName: 1, gmsaCredentialSpec: 2, runAsUserName: 3, hostProcess: 4 }, {
      gmsaCredentialSpecName: str('Name of the GMSA credential spec.'),
      gmsaCredentialSpec: str('Contents of the GMSA credential spec.'),
      runAsUserName: str('Windows user to run the entrypoint as.'),
      hostProcess: bool('Run as a host process container.'),
    })),
    [c('AppArmorProfile')]: obj('An AppArmor profile.', proto({ type: 1, localhostProfile: 2 }, {
      type: str('Localhost, RuntimeDefault or Unconfined.'),
      localhostProfile: str('Profile loaded on the node (type Localhost).'),
    })),
    // kube 1.32's (volumeStatus is a later release's)
    [c('VolumeMountStatus')]: obj('Status of one volume mount.', proto({ name: 1, mountPath: 2, readOnly: 3, recursiveReadOnly: 4 }, {
      name: str('Name of the volume mount.'),
      mountPath: str('Path of the mount.'),
      readOnly: bool('Mounted read-only.'),
      recursiveReadOnly: str('Disabled or Enabled.'),
    })),
    [c('ContainerUser')]: obj('Identity of the first process of the container.', proto({ linux: 1 }, {
      linux: obj('Linux identity.', proto({ uid: 1, gid: 2, supplementalGroups: 3 }, {
        uid: int64('Primary uid.'),
        gid: int64('Primary gid.'),
        supplementalGroups: atomicList('Supplemental groups.', { type: 'integer', format: 'int64' }),
      })),
    })),
    [c('ResourceStatus')]: obj('Health of one allocated resource.', proto({ name: 1, resources: 2 }, {
      name: str('Name of the resource.'),
      resources: listMap('Health of each resource instance.', obj('One resource instance.', proto({ resourceID: 1, health: 2 }, {
        resourceID: str('Unique resource ID.'),
        health: str('Healthy, Unhealthy or Unknown.'),
      })), ['resourceID']),
    })),
  };
}

function podAffinityFields(c: (k: string) => string): Record<string, Schema> {
  return proto({ requiredDuringSchedulingIgnoredDuringExecution: 1, preferredDuringSchedulingIgnoredDuringExecution: 2 }, {
    requiredDuringSchedulingIgnoredDuringExecution: atomicList('Terms that must all be satisfied.', ref(c('PodAffinityTerm'))),
    preferredDuringSchedulingIgnoredDuringExecution: atomicList('Weighted preferences.', ref(c('WeightedPodAffinityTerm'))),
  });
}

