// core/v1 Node: a worker machine, cluster-scoped. Status is reported by the
// node agent (spec 002); conditions and addresses merge by `type`.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import { column, get, getArray, getObject, getString } from './columns.js';
import { atomicList, bool, int32, int64, listMap, mapOf, obj, opaque, proto, ref, setList, str, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { nodeUpdateErrors } from './update-immutability.js';
import type { ZeroShape } from '../zero-shape.js';

/**
 * core/v1 Node: `spec`, and in `status` the non-pointer `daemonEndpoints` (whose
 * DaemonEndpoint `Port` has no omitempty) and `nodeInfo` (NodeSystemInfo: ten strings without omitempty)
 */
const NODE_SHAPE: ZeroShape = {
  spec: {},
  status: {
    daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
    nodeInfo: {
      machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '',
      containerRuntimeVersion: '', kubeletVersion: '', kubeProxyVersion: '', operatingSystem: '', architecture: '',
    },
  },
};

export function nodeDefinition(n: SchemaNames): ResourceDefinition {
  const quantities = (d: string) => mapOf(d, ref(n.quantity));
  return {
    group: '',
    version: 'v1',
    kind: 'Node',
    resource: 'nodes',
    singular: 'node',
    scope: 'Cluster',
    shortNames: ['no'],
    subresources: ['status', 'proxy'],
    schema: kindSchema(n, 'Node is a worker machine; each node runs a node agent and is cluster-scoped.', proto({ spec: 2, status: 3 }, {
      spec: obj('Desired behaviour of the node.', proto({ podCIDR: 1, podCIDRs: 7, providerID: 3, unschedulable: 4, taints: 5, configSource: 6, externalID: 2 }, {
        podCIDR: str('Pod IP range assigned to the node.'),
        podCIDRs: setList('Pod IP ranges assigned to the node, at most one per family.', { type: 'string' }, { 'x-orch-patch-strategy': 'merge' }),
        providerID: str('ID of the node assigned by the cloud provider: <ProviderName>://<ProviderSpecificNodeID>.'),
        unschedulable: bool('Keep new pods off the node (cordon).'),
        taints: atomicList('Taints that repel pods without a matching toleration.', ref(n.core('Taint'))),
        configSource: ref(n.core('NodeConfigSource'), 'Deprecated dynamic node agent configuration source.'),
        externalID: str('Deprecated.'),
      })),
      status: obj('Most recently observed status of the node.', proto({
        capacity: 1, allocatable: 2, phase: 3, conditions: 4, addresses: 5, daemonEndpoints: 6, nodeInfo: 7, images: 8, volumesInUse: 9, volumesAttached: 10, config: 11, runtimeHandlers: 12, features: 13,
      }, {
        capacity: quantities('Total resources of the node.'),
        allocatable: quantities('Resources available for scheduling; defaults to capacity.'),
        phase: str('Deprecated lifecycle phase.'),
        conditions: listMap('Current observed node conditions (Ready, MemoryPressure, ...).', obj('A node condition.', proto({ type: 1, status: 2, lastHeartbeatTime: 3, lastTransitionTime: 4, reason: 5, message: 6 }, {
          type: str('Condition type.'),
          status: str('True, False or Unknown.'),
          lastHeartbeatTime: time('Last time the condition was reported.'),
          lastTransitionTime: time('Last status change.'),
          reason: str('Machine-readable reason.'),
          message: str('Human-readable details.'),
        }), ['type', 'status']), ['type'], 'type'),
        addresses: listMap('Addresses reachable to the node.', obj('A node address.', proto({ type: 1, address: 2 }, {
          type: str('Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.'),
          address: str('The address.'),
        }), ['type', 'address']), ['type'], 'type'),
        daemonEndpoints: obj('Endpoints of daemons on the node.', proto({ kubeletEndpoint: 1 }, {
          kubeletEndpoint: obj('Node agent endpoint.', proto({ Port: 1 }, { Port: int32('Port number.') }), ['Port']),
        })),
        nodeInfo: obj('General information about the node.', proto({
          machineID: 1, systemUUID: 2, bootID: 3, kernelVersion: 4, osImage: 5, containerRuntimeVersion: 6, kubeletVersion: 7, kubeProxyVersion: 8,
          operatingSystem: 9, architecture: 10, swap: 11,
        }, {
          machineID: str('Machine ID.'),
          systemUUID: str('System UUID.'),
          bootID: str('Boot ID.'),
          kernelVersion: str('Kernel version (uname -r).'),
          osImage: str('OS image (/etc/os-release PRETTY_NAME).'),
          containerRuntimeVersion: str('Container runtime version.'),
          kubeletVersion: str('Node agent version.'),
          kubeProxyVersion: str('Deprecated.'),
          operatingSystem: str('Operating system.'),
          architecture: str('Architecture.'),
          swap: obj('Swap information.', proto({ capacity: 1 }, { capacity: int64('Swap capacity in bytes.') })),
        }), ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture']),
        images: atomicList('Container images on the node.', obj('An image.', proto({ names: 1, sizeBytes: 2 }, {
          names: atomicList('Names of the image.', { type: 'string' }),
          sizeBytes: int64('Size in bytes.'),
        }))),
        volumesInUse: atomicList('Volumes in use on the node.', { type: 'string' }),
        volumesAttached: atomicList('Volumes attached to the node.', obj('An attached volume.', proto({ name: 1, devicePath: 2 }, { name: str('Volume name.'), devicePath: str('Device path.') }), ['name', 'devicePath'])),
        config: ref(n.core('NodeConfigStatus'), 'Deprecated: status of the node agent configuration.'),
        runtimeHandlers: atomicList('Available runtime handlers.', obj('A runtime handler.', proto({ name: 1, features: 2 }, {
          name: str('Handler name; empty for the default handler.'),
          features: obj('Features of the handler.', proto({ recursiveReadOnlyMounts: 1, userNamespaces: 2 }, {
            recursiveReadOnlyMounts: bool('Supports recursive read-only mounts.'), userNamespaces: bool('Supports user namespaces.'),
          })),
        }))),
        features: obj('Features the node implementation supports.', proto({ supplementalGroupsPolicy: 1 }, {
          supplementalGroupsPolicy: bool('Supports SupplementalGroupsPolicy and ContainerUser.'),
        })),
      })),
    })),
    strategy: {
      zeroShape: NODE_SHAPE,
      // kube's dropDisabledFields (dynamic kubelet config is removed): a new node keeps neither
      // spec.configSource nor status.config; an update keeps configSource only if already set
      keepsStatusOnCreate: true,
      prepareForCreate: (o) => {
        // kube's NodeSpec is a struct: a node always has `spec`, and its creator owns `f:spec` (so later
        // writers such as kubectl taint/cordon are tracked in managedFields)
        o.spec ??= {};
        delete getObject(o, 'spec')?.configSource;
        delete getObject(o, 'status')?.config;
      },
      prepareForUpdate: (o, old) => {
        if (get(old, 'spec', 'configSource') === undefined) delete getObject(o, 'spec')?.configSource;
      },
      validateUpdate: nodeUpdateErrors,
      columns: [
        column('Status', 'string', nodeStatus, { description: 'The status of the node' }),
        column('Roles', 'string', (o) => nodeRoles(o, n.apiDomain), { description: 'The roles of the node' }),
        // where kubectl's node printer puts Age (the table fills it in)
        column('Age', 'string', () => null),
        column('Version', 'string', (o) => getString(o, 'status', 'nodeInfo', 'kubeletVersion') ?? '', { description: 'Node agent version' }),
        column('Internal-IP', 'string', (o) => address(o, 'InternalIP'), { priority: 1 }),
        column('External-IP', 'string', (o) => address(o, 'ExternalIP'), { priority: 1 }),
        // kube's printNode shows an empty (the zero shape's "") or absent value as <unknown>
        column('OS-Image', 'string', (o) => getString(o, 'status', 'nodeInfo', 'osImage') || '<unknown>', { priority: 1 }),
        column('Kernel-Version', 'string', (o) => getString(o, 'status', 'nodeInfo', 'kernelVersion') || '<unknown>', { priority: 1 }),
        column('Container-Runtime', 'string', (o) => getString(o, 'status', 'nodeInfo', 'containerRuntimeVersion') || '<unknown>', { priority: 1 }),
      ],
      selectableFields: { 'spec.unschedulable': (o) => String(get(o, 'spec', 'unschedulable') === true) },
    },
  };
}

function nodeStatus(o: ApiObject): string {
  const ready = getArray(o, 'status', 'conditions').find((c) => get(c, 'type') === 'Ready');
  const s = get(ready, 'status');
  // kube's printNode: NotReady for False and Unknown; Unknown only when there is no Ready condition
  const parts = [s === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown'];
  if (get(o, 'spec', 'unschedulable') === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

/** roles from `node-role.<domain>/<role>` labels (any domain) and `<domain>/role` */
function nodeRoles(o: ApiObject, domain: string): string {
  const labels = (o.metadata?.labels ?? {}) as Record<string, string>;
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels)) {
    const slash = k.indexOf('/');
    if (slash < 0) continue;
    const prefix = k.slice(0, slash);
    if (prefix.startsWith('node-role.') && k.length > slash + 1) roles.add(k.slice(slash + 1));
    else if ((prefix === domain || prefix === 'kubernetes.io') && k.slice(slash + 1) === 'role' && v) roles.add(v);
  }
  return roles.size > 0 ? [...roles].sort().join(',') : '<none>';
}

function address(o: ApiObject, type: string): string {
  const a = getArray(o, 'status', 'addresses').find((x) => get(x, 'type') === type);
  return getString(a, 'address') ?? '<none>';
}

