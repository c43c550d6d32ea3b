// Shared core/v1 structures referenced by several kinds (Pod's spec and status,
// Node taints, object references). Named like Kubernetes' so explain output and
// tools read the same. Rarely used deep structures are opaque (preserved).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Definitions, Schema } from '../../machinery/schema/types.js';
import {
  atomicList,
  bool,
  enumOf,
  int32,
  int64,
  listMap,
  mapOf,
  mergeList,
  obj,
  proto,
  protoEmbedded,
  protoTree,
  type ProtoTree,
  ref,
  str,
  strMap,
  time,
} from '../../machinery/schema/dsl.js';
import { podExtraDefinitions } from './core-pod-extras.js';
import { podVolumeSources, volumeSourceDefinitions } from './core-volume-sources.js';

const strings = (description: string): Schema => atomicList(description, { type: 'string' });
/** Kubernetes' `merge,retainKeys` lists (a volume's or claim's source: fields the patch leaves out are cleared) */
const RETAIN_KEYS = { 'x-orch-patch-strategy': 'merge,retainKeys' } as const;
/** Go's non-pointer omitempty bool: the false a protobuf client always writes is absent, as in kube's JSON */
const GO_ZERO = { 'x-orch-proto-omit-zero': true } as const;

export function coreDefinitions(n: SchemaNames): Definitions {
  const c = (k: string): string => n.core(k);
  const quantity = (d: string): Schema => ref(n.quantity, d);
  const handler = (d: string): Schema =>
    obj(d, proto({ exec: 1, httpGet: 2, tcpSocket: 3, sleep: 4 }, {
      exec: ref(c('ExecAction'), 'Run a command inside the container.'),
      httpGet: ref(c('HTTPGetAction'), 'Perform an HTTP GET.'),
      tcpSocket: ref(c('TCPSocketAction'), 'Open a TCP connection.'),
      sleep: obj('Sleep for a while.', proto({ seconds: 1 }, { seconds: int64('Seconds to sleep.') }), ['seconds']),
    }));

  // Container numbers; an EphemeralContainer holds them in EphemeralContainerCommon = 1
  const containerNumbers = {
    name: 1, image: 2, command: 3, args: 4, workingDir: 5, ports: 6, envFrom: 19, env: 7, resources: 8, resizePolicy: 23, restartPolicy: 24,
    volumeMounts: 9, volumeDevices: 21, livenessProbe: 10, readinessProbe: 11, startupProbe: 22, lifecycle: 12, terminationMessagePath: 13,
    terminationMessagePolicy: 20, imagePullPolicy: 14, securityContext: 15, stdin: 16, stdinOnce: 17, tty: 18,
  };
  const containerFields = (ephemeral: boolean): Record<string, Schema> => {
    const fields = containerFieldsOf(ephemeral);
    return ephemeral ? proto({ targetContainerName: 2 }, protoEmbedded(1, containerNumbers, fields)) : proto(containerNumbers, fields);
  };
  const containerFieldsOf = (ephemeral: boolean): Record<string, Schema> => ({
    name: str('Name of the container, unique within the pod (a DNS label). Cannot be updated.', { minLength: 1 }),
    image: str('Container image name.'),
    command: strings('Entrypoint array, not run in a shell; the image ENTRYPOINT is used if omitted. $(VAR) references are expanded.'),
    args: strings('Arguments to the entrypoint; the image CMD is used if omitted.'),
    workingDir: str('Working directory; the image default if omitted.'),
    ports: listMap(
      ephemeral ? 'Not allowed for ephemeral containers.' : 'Ports to expose from the container (informational).',
      ref(c('ContainerPort')),
      ['containerPort', 'protocol'],
      'containerPort',
    ),
    envFrom: atomicList('Sources to populate environment variables from.', ref(c('EnvFromSource'))),
    env: mergeList('Environment variables to set in the container.', ref(c('EnvVar')), 'name'),
    resources: ref(c('ResourceRequirements'), 'Compute resources required by the container.'),
    resizePolicy: atomicList('Resource resize policy.', ref(c('ContainerResizePolicy'))),
    restartPolicy: str('Container-level restart policy; only "Always" for sidecar init containers.'),
    volumeMounts: mergeList('Pod volumes to mount into the container filesystem.', ref(c('VolumeMount')), 'mountPath'),
    volumeDevices: mergeList('Block devices to be used by the container.', ref(c('VolumeDevice')), 'devicePath'),
    livenessProbe: ref(c('Probe'), 'Periodic probe of liveness; the container is restarted if it fails.'),
    readinessProbe: ref(c('Probe'), 'Periodic probe of readiness; failing removes the pod from service endpoints.'),
    startupProbe: ref(c('Probe'), 'Probe that must succeed before the other probes start.'),
    lifecycle: ref(c('Lifecycle'), 'Actions the management system runs on container lifecycle events.'),
    terminationMessagePath: str('File the container writes its termination message to.', { default: '/dev/termination-log' }),
    terminationMessagePolicy: enumOf('How the termination message is populated.', ['FallbackToLogsOnError', 'File'], { default: 'File' }),
    imagePullPolicy: enumOf('Image pull policy; defaults to Always for :latest or untagged images, else IfNotPresent.', ['Always', 'IfNotPresent', 'Never']),
    securityContext: ref(c('SecurityContext'), 'Security options the container runs with.'),
    stdin: bool('Allocate a buffer for stdin in the container runtime.', GO_ZERO),
    stdinOnce: bool('Close stdin after the first attach session.', GO_ZERO),
    tty: bool('Allocate a TTY for the container.', GO_ZERO),
    ...(ephemeral ? { targetContainerName: str('Container whose namespaces this ephemeral container targets.') } : {}),
  });

  const keyToPath = obj('Maps a key to a relative file path in a volume.', proto({ key: 1, path: 2, mode: 3 }, {
    key: str('The key to project.'),
    path: str('Relative path of the file to map the key to.'),
    mode: int32('File mode bits (octal 0000-0777 or decimal 0-511).'),
  }), ['key', 'path']);

  const volumeSources: Record<string, Schema> = {
    emptyDir: obj('A temporary directory that shares the pod lifetime.', proto({ medium: 1, sizeLimit: 2 }, {
      medium: str('Storage medium: "" (node default) or "Memory".'),
      sizeLimit: quantity('Total amount of local storage required.'),
    })),
    hostPath: obj('A file or directory on the host node.', proto({ path: 1, type: 2 }, {
      path: str('Path on the host.'),
      type: enumOf('Type of the host path.', ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'], { default: '' }),
    }), ['path']),
    configMap: obj('Files populated from a ConfigMap.', proto({ items: 2, defaultMode: 3, optional: 4 }, protoEmbedded(1, { name: 1 }, {
      name: str('Name of the ConfigMap.'),
      items: atomicList('Keys to project; all keys if empty.', keyToPath),
      defaultMode: int32('Mode bits of created files.', { default: 420 }),
      optional: bool('Whether the ConfigMap must exist.'),
    }))),
    secret: obj('Files populated from a Secret.', proto({ secretName: 1, items: 2, defaultMode: 3, optional: 4 }, {
      secretName: str('Name of the Secret in the pod namespace.'),
      items: atomicList('Keys to project; all keys if empty.', keyToPath),
      defaultMode: int32('Mode bits of created files.', { default: 420 }),
      optional: bool('Whether the Secret must exist.'),
    })),
    persistentVolumeClaim: obj('A reference to a PersistentVolumeClaim in the same namespace.', proto({ claimName: 1, readOnly: 2 }, {
      claimName: str('Name of the claim.'),
      readOnly: bool('Mount read-only.', GO_ZERO),
    }), ['claimName']),
    projected: obj('Several sources projected into one directory.', proto({ sources: 1, defaultMode: 2 }, {
      sources: atomicList('Volume projections.', obj('One projection.', proto({ secret: 1, downwardAPI: 2, configMap: 3, serviceAccountToken: 4, clusterTrustBundle: 5 }, {
        configMap: obj('ConfigMap projection.', proto({ items: 2, optional: 4 }, protoEmbedded(1, { name: 1 }, { name: str('ConfigMap name.'), items: atomicList('Keys to project.', keyToPath), optional: bool('Whether the ConfigMap must exist.') }))),
        secret: obj('Secret projection.', proto({ items: 2, optional: 4 }, protoEmbedded(1, { name: 1 }, { name: str('Secret name.'), items: atomicList('Keys to project.', keyToPath), optional: bool('Whether the Secret must exist.') }))),
        downwardAPI: obj('Downward API projection.', proto({ items: 1 }, { items: atomicList('Files to create.', ref(c('DownwardAPIVolumeFile'))) })),
        serviceAccountToken: obj('A service account token.', proto({ audience: 1, expirationSeconds: 2, path: 3 }, {
          audience: str('Intended audience of the token.'),
          expirationSeconds: int64('Requested token lifetime.', { default: 3600 }),
          path: str('Relative file path.'),
        }), ['path']),
        clusterTrustBundle: ref(c('ClusterTrustBundleProjection'), 'ClusterTrustBundles projected into a file.'),
      }))),
      defaultMode: int32('Mode bits of created files.', { default: 420 }),
    })),
    downwardAPI: obj('Files exposing pod information.', proto({ items: 1, defaultMode: 2 }, {
      items: atomicList('Files to create.', ref(c('DownwardAPIVolumeFile'))),
      defaultMode: int32('Mode bits of created files.', { default: 420 }),
    })),
    nfs: obj('An NFS export.', proto({ server: 1, path: 2, readOnly: 3 }, { server: str('NFS server.'), path: str('Exported path.'), readOnly: bool('Mount read-only.') }), ['server', 'path']),
    ...podVolumeSources(n),
  };

  const containerState = obj('Exactly one of waiting, running or terminated.', proto({ waiting: 1, running: 2, terminated: 3 }, {
    waiting: obj('Not yet running.', proto({ reason: 1, message: 2 }, { reason: str('Brief reason.'), message: str('Details.') })),
    running: obj('Running.', proto({ startedAt: 1 }, { startedAt: time('Time the container (last) started.') })),
    terminated: obj('Terminated.', proto({ exitCode: 1, signal: 2, reason: 3, message: 4, startedAt: 5, finishedAt: 6, containerID: 7 }, {
      exitCode: int32('Exit status.'),
      signal: int32('Signal that terminated it.'),
      reason: str('Brief reason.'),
      message: str('Details.'),
      startedAt: time('Start of the last run.'),
      finishedAt: time('End of the last run.'),
      containerID: str('Container ID.'),
    }), ['exitCode']),
  }));

  const defs: Definitions = {
    [c('LocalObjectReference')]: obj('A reference to an object in the same namespace.', { name: str('Name of the referent.', { default: '' }) }, undefined, { 'x-orch-map-type': 'atomic' }),
    [c('ObjectReference')]: obj('A reference to any object.', {
      kind: str('Kind of the referent.'),
      namespace: str('Namespace of the referent.'),
      name: str('Name of the referent.'),
      uid: str('UID of the referent.'),
      apiVersion: str('API version of the referent.'),
      resourceVersion: str('Specific resourceVersion the reference is to.'),
      fieldPath: str('A piece of the object instead of the whole, e.g. spec.containers{name}.'),
    }, undefined, { 'x-orch-map-type': 'atomic' }),
    [c('ContainerPort')]: obj('A network port in a single container.', {
      name: str('An IANA_SVC_NAME, unique within the pod, that services can refer to.'),
      hostPort: int32('Port to expose on the host.', GO_ZERO),
      containerPort: int32('Port to expose on the pod IP address (0 < x < 65536).'),
      protocol: enumOf('Protocol for the port.', ['SCTP', 'TCP', 'UDP'], { default: 'TCP' }),
      hostIP: str('Host IP to bind the external port to.'),
    }, ['containerPort']),
    [c('EnvVar')]: obj('An environment variable in a container.', {
      name: str('Name of the variable (a C_IDENTIFIER).', { minLength: 1 }),
      value: str('Value; $(VAR) references are expanded.'),
      valueFrom: ref(c('EnvVarSource'), "Source for the variable's value; not with value."),
    }, ['name']),
    [c('EnvVarSource')]: obj('Where an environment variable takes its value from.', {
      fieldRef: obj('A field of the pod.', { apiVersion: str('Version of the schema fieldPath is written in.', { default: 'v1' }), fieldPath: str('Path of the field.') }, ['fieldPath'], { 'x-orch-map-type': 'atomic' }),
      resourceFieldRef: ref(c('ResourceFieldSelector'), 'A resource of the container: limits/requests.'),
      configMapKeyRef: obj('A key of a ConfigMap.', { name: str('ConfigMap name.', { default: '' }), key: str('The key.'), optional: bool('Whether it must exist.') }, ['key'], { 'x-orch-map-type': 'atomic' }),
      secretKeyRef: obj('A key of a Secret.', { name: str('Secret name.', { default: '' }), key: str('The key.'), optional: bool('Whether it must exist.') }, ['key'], { 'x-orch-map-type': 'atomic' }),
    }),
    [c('ResourceFieldSelector')]: obj('A container resource (cpu, memory) and its output format.', {
      containerName: str('Container name; required for volumes.'),
      resource: str('Resource to select.'),
      divisor: quantity('Output format of the resource.'),
    }, ['resource'], { 'x-orch-map-type': 'atomic' }),
    [c('EnvFromSource')]: obj('A source of a set of environment variables.', {
      prefix: str('Prefix to add to each key.'),
      configMapRef: obj('The ConfigMap.', { name: str('ConfigMap name.', { default: '' }), optional: bool('Whether it must exist.') }),
      secretRef: obj('The Secret.', { name: str('Secret name.', { default: '' }), optional: bool('Whether it must exist.') }),
    }),
    [c('ResourceRequirements')]: obj('Compute resource requirements.', {
      limits: mapOf('Maximum amount of compute resources allowed.', ref(n.quantity)),
      requests: mapOf('Minimum amount of compute resources required; defaults to limits when omitted.', ref(n.quantity)),
      claims: listMap('Dynamically allocated resources used by the container.', obj('One claim.', { name: str('Claim name.'), request: str('Request name.') }, ['name']), ['name']),
    }),
    [c('VolumeMount')]: obj('Mounting of a volume within a container.', {
      name: str('Name of a pod volume.', { minLength: 1 }),
      readOnly: bool('Mount read-only.', GO_ZERO),
      recursiveReadOnly: str('Whether read-only mounts are recursively read-only.'),
      mountPath: str('Path within the container at which to mount; must not contain ":".', { minLength: 1 }),
      subPath: str('Path within the volume to mount instead of its root.'),
      mountPropagation: str('How mounts propagate between host and container.'),
      subPathExpr: str('Like subPath, with $(VAR) expansion.'),
    }, ['name', 'mountPath']),
    [c('ExecAction')]: obj('Run a command.', { command: strings('Command line to execute inside the container; not run in a shell.') }),
    [c('HTTPGetAction')]: obj('An HTTP GET request.', {
      // kube's SetDefaults_HTTPGetAction (probes and lifecycle handlers, in pods and templates alike)
      path: str('Path to access.', { default: '/' }),
      port: ref(n.intOrString, 'Port number or name.'),
      host: str('Host name; defaults to the pod IP.'),
      scheme: enumOf('Scheme.', ['HTTP', 'HTTPS'], { default: 'HTTP' }),
      httpHeaders: atomicList('Custom request headers.', obj('One header.', { name: str('Header name.'), value: str('Header value.') }, ['name', 'value'])),
    }, ['port']),
    [c('TCPSocketAction')]: obj('A TCP connection.', { port: ref(n.intOrString, 'Port number or name.'), host: str('Host; defaults to the pod IP.') }, ['port']),
    [c('Probe')]: obj('A health check performed against a container.', {
      exec: ref(c('ExecAction'), 'Run a command.'),
      httpGet: ref(c('HTTPGetAction'), 'Perform an HTTP GET.'),
      tcpSocket: ref(c('TCPSocketAction'), 'Open a TCP connection.'),
      grpc: obj('A gRPC health check.', { port: int32('Port number.'), service: str('Service name.', { default: '' }) }, ['port']),
      initialDelaySeconds: int32('Seconds after start before the first probe.', GO_ZERO),
      // Go's non-pointer omitempty numbers: a protobuf 0 is unset, which defaulting fills as kube's SetDefaults_Probe
      timeoutSeconds: int32('Seconds after which the probe times out.', { default: 1, ...GO_ZERO }),
      periodSeconds: int32('How often to probe, in seconds.', { default: 10, ...GO_ZERO }),
      successThreshold: int32('Consecutive successes to count as success after a failure.', { default: 1, ...GO_ZERO }),
      failureThreshold: int32('Consecutive failures to count as failure.', { default: 3, ...GO_ZERO }),
      terminationGracePeriodSeconds: int64('Grace period for a probe-triggered kill.'),
    }),
    // kube 1.32's (stopSignal is 1.33's alpha ContainerStopSignals: 1.32 prunes it)
    [c('Lifecycle')]: obj('Actions to take on container lifecycle events.', {
      postStart: handler('Called right after the container is created.'),
      preStop: handler('Called before the container is terminated.'),
    }),
    [c('SecurityContext')]: obj('Security options of a container; they override the pod-level ones.', {
      capabilities: obj('Capabilities to add and drop.', { add: strings('Added capabilities.'), drop: strings('Dropped capabilities.') }),
      privileged: bool('Run in privileged mode.'),
      seLinuxOptions: ref(c('SELinuxOptions'), 'SELinux context.'),
      windowsOptions: ref(c('WindowsSecurityContextOptions'), 'Windows-specific options.'),
      runAsUser: int64('UID to run the entrypoint as.'),
      runAsGroup: int64('GID to run the entrypoint as.'),
      runAsNonRoot: bool('Require the container to run as a non-root user.'),
      readOnlyRootFilesystem: bool('Mount the root filesystem read-only.'),
      allowPrivilegeEscalation: bool('Whether a process can gain more privileges than its parent.'),
      procMount: str('Type of proc mount.'),
      seccompProfile: ref(c('SeccompProfile'), 'Seccomp options.'),
      appArmorProfile: ref(c('AppArmorProfile'), 'AppArmor options.'),
    }),
    [c('SELinuxOptions')]: obj('SELinux labels.', { user: str('User label.'), role: str('Role label.'), type: str('Type label.'), level: str('Level label.') }),
    [c('SeccompProfile')]: obj('A seccomp profile.', {
      type: enumOf('Kind of profile.', ['Localhost', 'RuntimeDefault', 'Unconfined']),
      localhostProfile: str('Profile file on the node, relative to the kubelet seccomp directory.'),
    }, ['type']),
    [c('PodSecurityContext')]: obj('Pod-level security attributes and common container settings.', {
      seLinuxOptions: ref(c('SELinuxOptions'), 'SELinux context for all containers.'),
      windowsOptions: ref(c('WindowsSecurityContextOptions'), 'Windows-specific options.'),
      runAsUser: int64('UID to run container entrypoints as.'),
      runAsGroup: int64('GID to run container entrypoints as.'),
      runAsNonRoot: bool('Require containers to run as non-root.'),
      supplementalGroups: atomicList('Extra groups for the first process of each container.', { type: 'integer', format: 'int64' }),
      supplementalGroupsPolicy: str('How supplemental groups are computed.'),
      fsGroup: int64('Group that owns volumes and is added to every container.'),
      fsGroupChangePolicy: str('When to change volume ownership.'),
      sysctls: atomicList('Namespaced sysctls.', obj('One sysctl.', { name: str('Name.'), value: str('Value.') }, ['name', 'value'])),
      seccompProfile: ref(c('SeccompProfile'), 'Seccomp options for all containers.'),
      appArmorProfile: ref(c('AppArmorProfile'), 'AppArmor options.'),
      seLinuxChangePolicy: str('How the SELinux label is applied to volumes.'),
    }),
    [c('DownwardAPIVolumeFile')]: obj('A file exposing a pod field.', {
      path: str('Relative file path.'),
      fieldRef: obj('A pod field.', { apiVersion: str('Schema version.', { default: 'v1' }), fieldPath: str('Path of the field.') }, ['fieldPath'], { 'x-orch-map-type': 'atomic' }),
      resourceFieldRef: ref(c('ResourceFieldSelector'), 'A container resource.'),
      mode: int32('File mode bits.'),
    }, ['path']),
    [c('Volume')]: obj('A named volume that containers in the pod can mount.', {
      name: str('Volume name, a DNS label unique within the pod.', { minLength: 1 }),
      ...volumeSources,
    }, ['name']),
    [c('Container')]: obj('A single application container to run within a pod.', containerFields(false), ['name']),
    [c('EphemeralContainer')]: obj('A temporary container added to a running pod for debugging.', containerFields(true), ['name']),
    [c('Toleration')]: obj('Lets the pod schedule onto nodes with a matching taint.', {
      key: str('Taint key; empty with operator Exists matches all keys.'),
      operator: enumOf('Relation of key to value.', ['Equal', 'Exists']),
      value: str('Taint value the toleration matches.'),
      effect: enumOf('Taint effect to match; empty matches all.', ['NoExecute', 'NoSchedule', 'PreferNoSchedule']),
      tolerationSeconds: int64('How long a NoExecute taint is tolerated.'),
    }),
    [c('Taint')]: obj('Repels pods that do not tolerate it.', {
      key: str('Taint key.'),
      value: str('Taint value.'),
      effect: enumOf('Effect on pods that do not tolerate the taint.', ['NoExecute', 'NoSchedule', 'PreferNoSchedule']),
      timeAdded: time('When the taint was added (NoExecute only).'),
    }, ['key', 'effect']),
    [c('PodSpec')]: obj('The desired behaviour of a pod.', {
      volumes: listMap('Volumes that containers of the pod can mount.', ref(c('Volume')), ['name'], 'name', RETAIN_KEYS),
      initContainers: listMap('Containers run in order to completion before the app containers start.', ref(c('Container')), ['name'], 'name'),
      containers: listMap('Containers of the pod; at least one.', ref(c('Container')), ['name'], 'name'),
      ephemeralContainers: listMap('Debugging containers added to a running pod.', ref(c('EphemeralContainer')), ['name'], 'name'),
      restartPolicy: enumOf('Restart policy for all containers.', ['Always', 'Never', 'OnFailure'], { default: 'Always' }),
      terminationGracePeriodSeconds: int64('Seconds the pod has to terminate gracefully.', { default: 30 }),
      activeDeadlineSeconds: int64('Seconds the pod may be active before the system marks it failed.'),
      dnsPolicy: enumOf('DNS policy of the pod.', ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'], { default: 'ClusterFirst' }),
      nodeSelector: strMap('Labels a node must carry for the pod to schedule there.', { 'x-orch-map-type': 'atomic' }),
      serviceAccountName: str('Service account the pod runs as.'),
      serviceAccount: str('Deprecated alias of serviceAccountName.'),
      automountServiceAccountToken: bool('Mount the service account token automatically.'),
      nodeName: str('Node the pod is bound to; set by the scheduler.'),
      hostNetwork: bool("Use the host's network namespace.", GO_ZERO),
      hostPID: bool("Use the host's PID namespace.", GO_ZERO),
      hostIPC: bool("Use the host's IPC namespace.", GO_ZERO),
      shareProcessNamespace: bool('Share one process namespace between the containers.'),
      securityContext: ref(c('PodSecurityContext'), 'Pod-level security attributes.', { default: {} }),
      imagePullSecrets: mergeList('Secrets used to pull images.', ref(c('LocalObjectReference')), 'name'),
      hostname: str('Hostname of the pod; the pod name if omitted.'),
      subdomain: str('Subdomain for the fully qualified hostname.'),
      affinity: ref(c('Affinity'), 'Scheduling constraints.'),
      schedulerName: str('Scheduler that dispatches the pod.', { default: 'default-scheduler' }),
      tolerations: atomicList('Tolerations of node taints.', ref(c('Toleration'))),
      hostAliases: mergeList('Extra /etc/hosts entries.', obj('One hosts entry.', { ip: str('IP address.'), hostnames: strings('Host names.') }, ['ip']), 'ip'),
      priorityClassName: str('Name of the pod priority class.'),
      priority: int32('Priority value, set from the priority class.'),
      dnsConfig: obj('DNS parameters beyond the policy.', {
        nameservers: strings('Name server IPs.'),
        searches: strings('Search domains.'),
        options: atomicList('Resolver options.', obj('One option.', { name: str('Option name.'), value: str('Option value.') })),
      }),
      readinessGates: atomicList('Extra conditions evaluated for pod readiness.', obj('A gate.', { conditionType: str('Condition type.') }, ['conditionType'])),
      runtimeClassName: str('RuntimeClass used to run the pod.'),
      // defaulted in pods only (pod.ts defaultPod, kube's SetDefaults_Pod), never in templates
      enableServiceLinks: bool('Inject service environment variables.'),
      preemptionPolicy: str('Never or PreemptLowerPriority.'),
      overhead: mapOf('Resource overhead of the pod sandbox.', ref(n.quantity)),
      topologySpreadConstraints: listMap('How pods spread across topology domains.', ref(c('TopologySpreadConstraint')), ['topologyKey', 'whenUnsatisfiable'], 'topologyKey'),
      setHostnameAsFQDN: bool('Use the FQDN as hostname.'),
      os: obj('Operating system of the containers.', { name: str('linux or windows.') }, ['name']),
      hostUsers: bool('Use the host user namespace.'),
      schedulingGates: listMap('Gates that block scheduling while present.', obj('A gate.', { name: str('Gate name.') }, ['name']), ['name'], 'name'),
      resourceClaims: listMap('Resource claims of the pod.', ref(c('PodResourceClaim')), ['name'], 'name', RETAIN_KEYS),
      resources: ref(c('ResourceRequirements'), 'Pod-level resources.'),
    }, ['containers']),
    [c('PodCondition')]: obj('One observed condition of a pod.', {
      type: str('Condition type (PodScheduled, Initialized, ContainersReady, Ready, ...).'),
      status: str('True, False or Unknown.'),
      lastProbeTime: time('Last time the condition was probed.'),
      lastTransitionTime: time('Last time the status changed.'),
      reason: str('Machine-readable reason of the last transition.'),
      message: str('Human-readable details of the last transition.'),
    }, ['type', 'status']),
    [c('ContainerState')]: containerState,
    [c('ContainerStatus')]: obj('Observed state of one container.', {
      name: str('Container name.'),
      state: ref(c('ContainerState'), 'Current state.'),
      lastState: ref(c('ContainerState'), 'State of the last termination.'),
      ready: bool('Whether the container passes its readiness probe.'),
      restartCount: int32('Number of restarts.'),
      image: str('Image the container runs.'),
      imageID: str('Image ID.'),
      containerID: str('Container ID, <type>://<id>.'),
      started: bool('Whether the startup probe has passed.'),
      allocatedResources: mapOf('Resources allocated to the container.', ref(n.quantity)),
      resources: ref(c('ResourceRequirements'), 'Resources actually configured.'),
      volumeMounts: listMap('Status of volume mounts.', ref(c('VolumeMountStatus')), ['mountPath'], 'mountPath'),
      user: ref(c('ContainerUser'), 'Identities of the first process.'),
      allocatedResourcesStatus: listMap('Health of allocated resources.', ref(c('ResourceStatus')), ['name'], 'name'),
    }, ['name', 'ready', 'restartCount', 'image', 'imageID']),
    [c('PodStatus')]: obj('Most recently observed status of a pod.', {
      phase: enumOf('Lifecycle phase.', ['Failed', 'Pending', 'Running', 'Succeeded', 'Unknown']),
      conditions: listMap('Current service state.', ref(c('PodCondition')), ['type'], 'type'),
      message: str('Why the pod is in this condition.'),
      reason: str('Brief CamelCase reason, e.g. Evicted.'),
      nominatedNodeName: str('Node the pod is expected to run on after preemption.'),
      hostIP: str('Primary IP of the node the pod runs on.'),
      hostIPs: listMap('IPs of the node.', obj('A host IP.', { ip: str('IP address.') }, ['ip']), ['ip'], 'ip'),
      podIP: str('Primary IP of the pod.'),
      podIPs: listMap('IPs of the pod, at most one per family.', obj('A pod IP.', { ip: str('IP address.') }, ['ip']), ['ip'], 'ip'),
      startTime: time('When the node accepted the pod.'),
      initContainerStatuses: atomicList('Status of each init container.', ref(c('ContainerStatus'))),
      containerStatuses: atomicList('Status of each container.', ref(c('ContainerStatus'))),
      ephemeralContainerStatuses: atomicList('Status of each ephemeral container.', ref(c('ContainerStatus'))),
      qosClass: enumOf('Quality of service class.', ['BestEffort', 'Burstable', 'Guaranteed']),
      resize: str('Status of a resize.'),
      resourceClaimStatuses: listMap('Generated claim names.', ref(c('PodResourceClaimStatus')), ['name'], 'name', RETAIN_KEYS),
      observedGeneration: int64('Generation the status reflects.'),
    }),
  };
  // protobuf field numbers: k8s.io/api core/v1 generated.proto (spec 000 §2.7)
  const numbers: Record<string, ProtoTree> = {
    LocalObjectReference: { name: 1 },
    ObjectReference: { kind: 1, namespace: 2, name: 3, uid: 4, apiVersion: 5, resourceVersion: 6, fieldPath: 7 },
    ContainerPort: { name: 1, hostPort: 2, containerPort: 3, protocol: 4, hostIP: 5 },
    EnvVar: { name: 1, value: 2, valueFrom: 3 },
    EnvVarSource: {
      fieldRef: [1, { apiVersion: 1, fieldPath: 2 }],
      resourceFieldRef: 2,
      configMapKeyRef: [3, { 'name@1': 1, key: 2, optional: 3 }],
      secretKeyRef: [4, { 'name@1': 1, key: 2, optional: 3 }],
    },
    ResourceFieldSelector: { containerName: 1, resource: 2, divisor: 3 },
    EnvFromSource: { prefix: 1, configMapRef: [2, { 'name@1': 1, optional: 2 }], secretRef: [3, { 'name@1': 1, optional: 2 }] },
    ResourceRequirements: { limits: 1, requests: 2, claims: [3, { name: 1, request: 2 }] },
    VolumeMount: { name: 1, readOnly: 2, mountPath: 3, subPath: 4, mountPropagation: 5, subPathExpr: 6, recursiveReadOnly: 7 },
    ExecAction: { command: 1 },
    HTTPGetAction: { path: 1, port: 2, host: 3, scheme: 4, httpHeaders: [5, { name: 1, value: 2 }] },
    TCPSocketAction: { port: 1, host: 2 },
    Probe: {
      'exec@1': 1, 'httpGet@1': 2, 'tcpSocket@1': 3, 'grpc@1': [4, { port: 1, service: 2 }],
      initialDelaySeconds: 2, timeoutSeconds: 3, periodSeconds: 4, successThreshold: 5, failureThreshold: 6, terminationGracePeriodSeconds: 7,
    },
    Lifecycle: { postStart: 1, preStop: 2 },
    SecurityContext: {
      capabilities: [1, { add: 1, drop: 2 }], privileged: 2, seLinuxOptions: 3, runAsUser: 4, runAsNonRoot: 5, readOnlyRootFilesystem: 6,
      allowPrivilegeEscalation: 7, runAsGroup: 8, procMount: 9, windowsOptions: 10, seccompProfile: 11, appArmorProfile: 12,
    },
    SELinuxOptions: { user: 1, role: 2, type: 3, level: 4 },
    SeccompProfile: { type: 1, localhostProfile: 2 },
    PodSecurityContext: {
      seLinuxOptions: 1, runAsUser: 2, runAsNonRoot: 3, supplementalGroups: 4, fsGroup: 5, runAsGroup: 6, sysctls: [7, { name: 1, value: 2 }],
      windowsOptions: 8, fsGroupChangePolicy: 9, seccompProfile: 10, appArmorProfile: 11, supplementalGroupsPolicy: 12, seLinuxChangePolicy: 13,
    },
    DownwardAPIVolumeFile: { path: 1, fieldRef: [2, { apiVersion: 1, fieldPath: 2 }], resourceFieldRef: 3, mode: 4 },
    Volume: {
      name: 1, 'hostPath@2': 1, 'emptyDir@2': 2, 'secret@2': 6, 'nfs@2': 7, 'persistentVolumeClaim@2': 10, 'downwardAPI@2': 16,
      'configMap@2': 19, 'projected@2': 26,
      'gcePersistentDisk@2': 3, 'awsElasticBlockStore@2': 4, 'gitRepo@2': 5, 'iscsi@2': 8, 'glusterfs@2': 9, 'rbd@2': 11, 'flexVolume@2': 12, 'cinder@2': 13,
      'cephfs@2': 14, 'flocker@2': 15, 'fc@2': 17, 'azureFile@2': 18, 'vsphereVolume@2': 20, 'quobyte@2': 21, 'azureDisk@2': 22, 'photonPersistentDisk@2': 23,
      'portworxVolume@2': 24, 'scaleIO@2': 25, 'storageos@2': 27, 'csi@2': 28, 'ephemeral@2': 29, 'image@2': 30,
    },
    Toleration: { key: 1, operator: 2, value: 3, effect: 4, tolerationSeconds: 5 },
    Taint: { key: 1, value: 2, effect: 3, timeAdded: 4 },
    PodSpec: {
      volumes: 1, containers: 2, restartPolicy: 3, terminationGracePeriodSeconds: 4, activeDeadlineSeconds: 5, dnsPolicy: 6, nodeSelector: 7,
      serviceAccountName: 8, serviceAccount: 9, nodeName: 10, hostNetwork: 11, hostPID: 12, hostIPC: 13, securityContext: 14, imagePullSecrets: 15,
      hostname: 16, subdomain: 17, affinity: 18, schedulerName: 19, initContainers: 20, automountServiceAccountToken: 21, tolerations: 22,
      hostAliases: [23, { ip: 1, hostnames: 2 }], priorityClassName: 24, priority: 25,
      dnsConfig: [26, { nameservers: 1, searches: 2, options: [3, { name: 1, value: 2 }] }], shareProcessNamespace: 27,
      readinessGates: [28, { conditionType: 1 }], runtimeClassName: 29, enableServiceLinks: 30, preemptionPolicy: 31, overhead: 32,
      topologySpreadConstraints: 33, ephemeralContainers: 34, setHostnameAsFQDN: 35, os: [36, { name: 1 }], hostUsers: 37, schedulingGates: [38, { name: 1 }], resourceClaims: 39, resources: 40,
    },
    PodCondition: { type: 1, status: 2, lastProbeTime: 3, lastTransitionTime: 4, reason: 5, message: 6 },
    ContainerStatus: {
      name: 1, state: 2, lastState: 3, ready: 4, restartCount: 5, image: 6, imageID: 7, containerID: 8, started: 9, allocatedResources: 10,
      resources: 11, volumeMounts: 12, user: 13, allocatedResourcesStatus: 14,
    },
    PodStatus: {
      phase: 1, conditions: 2, message: 3, reason: 4, hostIP: 5, podIP: 6, startTime: 7, containerStatuses: 8, qosClass: 9,
      initContainerStatuses: 10, nominatedNodeName: 11, podIPs: [12, { ip: 1 }], ephemeralContainerStatuses: 13, resize: 14, resourceClaimStatuses: 15,
      hostIPs: [16, { ip: 1 }], observedGeneration: 17,
    },
  };
  for (const [name, tree] of Object.entries(numbers)) {
    const schema = defs[c(name)];
    if (!schema) throw new Error(`protobuf field numbers for ${name}, which has no schema`);
    defs[c(name)] = protoTree(schema, tree);
  }
  return { ...defs, ...podExtraDefinitions(n), ...volumeSourceDefinitions(n) };
}
