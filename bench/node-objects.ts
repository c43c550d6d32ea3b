// The objects a simulated node agent writes (bench/nodes.ts, bench/controller-start.ts): its Lease and its
// Node status with the five conditions, sized like a kubelet's (~1.5 KiB).

export const rfc = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
export const micro = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

export function leaseObject(name: string, now: number): Record<string, unknown> {
  return { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, namespace: 'orch-node-lease' }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: micro(now) } };
}
export function nodeStatus(now: number): Record<string, unknown> {
  const c = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastHeartbeatTime: rfc(now), lastTransitionTime: rfc(now - 3_600_000) });
  return {
    capacity: { cpu: '4', memory: '16338436Ki', 'ephemeral-storage': '102687672Ki', pods: '110' },
    allocatable: { cpu: '4', memory: '16236036Ki', 'ephemeral-storage': '94636958816', pods: '110' },
    conditions: [
      c('MemoryPressure', 'False', 'NodeHasSufficientMemory', 'node has sufficient memory available'),
      c('DiskPressure', 'False', 'NodeHasNoDiskPressure', 'node has no disk pressure'),
      c('PIDPressure', 'False', 'NodeHasSufficientPID', 'node has sufficient PID available'),
      c('NetworkUnavailable', 'False', 'NodeNetworkReady', 'node network is configured'),
      c('Ready', 'True', 'NodeAgentReady', 'node agent is posting ready status'),
    ],
    addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'Hostname', address: 'node' }],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'orch-runtime-sim://0.1.0', kubeletVersion: 'v1.32.0-orch.0.1.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
  };
}
