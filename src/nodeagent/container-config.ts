// The runtime's configuration of one container attempt, as kuberuntime's
// generateContainerConfig builds it: the image (pulled by its policy), the
// environment and command, the mounts (volumes, the pod's managed /etc/hosts,
// the termination-message file), the container's user (run-as-user.ts), the
// seccomp profile, and kubelet's labels and annotations. A step that cannot be done is the container's waiting
// reason and message (ErrImagePull…, CreateContainerConfigError,
// CreateContainerError), which the pod syncer records and retries.

import type { KubeObject } from './api-client.js';
import { EnvError, type EnvPod } from './container-env.js';
import { type EnvReader, readContainerEnv } from './env-reader.js';
import { type EtcHosts, HostsFileError, type HostsPod } from './etc-hosts.js';
import type { ImagePuller } from './images.js';
import { CONTAINER_HASH_ANNOTATION, containerHash, type ContainerSpec, LABEL_CONTAINER, type PodSpec } from './pod-spec.js';
import { imageUser, runtimeUser, verifyRunAsNonRoot } from './run-as-user.js';
import { RuntimeCallError, type RuntimeClient } from './runtime/client.js';
import { type ContainerConfig, CONTAINER_PORTS_ANNOTATION, type PodSandboxConfig } from './runtime/types.js';
import { effectiveProfile, resolveSeccomp, SeccompError } from './seccomp.js';
import { SubPathError } from './subpath.js';
import type { TerminationMessages } from './termination-message.js';
import type { VolumeManager } from './volumes.js';
import type { ObjectRef } from './events/correlator.js';

export interface ContainerConfigDeps {
  runtime: RuntimeClient;
  rootDir: string;
  hostIP: string;
  images: ImagePuller;
  volumes: VolumeManager;
  etcHosts: EtcHosts;
  messages: TerminationMessages;
  envReader?: EnvReader;
  allocatable?: () => Record<string, string>;
}

/** why a container cannot be created now: its waiting reason and message, and its `Failed` Event's message */
export interface ConfigFailure {
  reason: string;
  message: string;
  eventMessage: string;
}

/**
 * kubelet: a host-network pod's IP is the node's (generateAPIPodStatus takes the node's addresses for
 * it; the sandbox's own address is not the pod's), in its status and its env's status.podIP alike
 */
export function podIPOf(spec: PodSpec, hostIP: string | undefined, sandboxIP: string | undefined): string | undefined {
  return spec.hostNetwork && hostIP ? hostIP : sandboxIP;
}

/** the configuration of attempt `attempt` of container `c` in the pod's sandbox, or why there is none yet */
export async function containerConfig(
  d: ContainerConfigDeps,
  pod: KubeObject,
  sandbox: string,
  sb: PodSandboxConfig,
  c: ContainerSpec,
  attempt: number,
  ref: ObjectRef,
): Promise<{ config: ContainerConfig } | { failure: ConfigFailure }> {
  const spec = pod.spec as unknown as PodSpec;
  const uid = pod.metadata.uid!;
  const fail = (reason: string, message: string, eventMessage = message) => ({ failure: { reason, message, eventMessage } });
  const image = await d.images.ensure(uid, c.image, c.imagePullPolicy, ref);
  if (image) return fail(image.reason, image.message, image.reason);
  let env;
  const ip = podIPOf(spec, d.hostIP, (await d.runtime.podSandboxStatus(sandbox)).network?.ip);
  try {
    const i = { pod: pod as EnvPod, container: c, podIPs: ip ? [ip] : [], hostIPs: d.hostIP ? [d.hostIP] : [], allocatable: d.allocatable?.() ?? {} };
    env = await readContainerEnv(d.envReader, i);
  } catch (e) {
    if (!(e instanceof EnvError)) throw e;
    // kubelet: an environment that cannot be built is CreateContainerConfigError; a later sync retries
    return fail('CreateContainerConfigError', e.message);
  }
  let mounts;
  try {
    mounts = await d.volumes.containerMounts(uid, c, env.env);
    // kubelet's makeMounts: the pod's managed /etc/hosts, written from the sandbox's IP (etc-hosts.ts)
    mounts.push(...(await d.etcHosts.mount(pod as unknown as HostsPod, ip ? [ip] : [], c)));
  } catch (e) {
    if (!(e instanceof SubPathError) && !(e instanceof HostsFileError)) throw e;
    // kubelet's makeMounts fails the container config: CreateContainerConfigError, retried at a later sync
    return fail('CreateContainerConfigError', e.message);
  }
  // kubelet's getImageUser (a separate ImageStatus) and verifyRunAsNonRoot: CreateContainerConfigError
  let user;
  try {
    user = imageUser(await d.runtime.imageStatus(c.image));
  } catch (e) {
    if (!(e instanceof RuntimeCallError)) throw e;
    return fail('CreateContainerConfigError', e.goError);
  }
  const nonRoot = verifyRunAsNonRoot(pod, c, user);
  if (nonRoot) return fail('CreateContainerConfigError', nonRoot);
  let seccomp;
  try {
    seccomp = await resolveSeccomp(d.rootDir, effectiveProfile(spec.securityContext?.seccompProfile, c.securityContext?.seccompProfile));
  } catch (e) {
    if (!(e instanceof SeccompError)) throw e;
    // spec 002 §7: a missing Localhost profile makes container creation fail with CreateContainerError
    return fail('CreateContainerError', e.message);
  }
  return {
    config: {
      metadata: { name: c.name, attempt },
      image: { image: c.image },
      command: env.command,
      args: env.args,
      workingDir: c.workingDir ?? '',
      envs: env.env,
      mounts: [...mounts, ...(await d.messages.prepare(uid, c, attempt))],
      labels: { ...sb.labels, [LABEL_CONTAINER]: c.name },
      // kubelet's container annotations: the definition's hash (a changed one is restarted); the
      // simulator reads where an emulated image listens from the ports
      annotations: {
        [CONTAINER_HASH_ANNOTATION]: containerHash(c),
        ...(c.ports?.length ? { [CONTAINER_PORTS_ANNOTATION]: JSON.stringify(c.ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), containerPort: p.containerPort, protocol: p.protocol ?? 'TCP' }))) } : {}),
      },
      linux: { securityContext: { ...(seccomp ? { seccomp } : {}), ...runtimeUser(pod, c, user) } },
    },
  };
}
