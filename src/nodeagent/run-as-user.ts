// The container's user, as kubelet 1.32 computes it before creating a container
// (kuberuntime's generateContainerConfig): the effective securityContext —
// each of runAsUser, runAsGroup and runAsNonRoot from the container's
// securityContext, else the pod's (securitycontext.DetermineEffectiveSecurityContext)
// — the image's user from the runtime's ImageStatus (getImageUser: its numeric
// uid, else its user name, else root), the runAsNonRoot check
// (verifyRunAsNonRoot, whose failure is the container's CreateContainerConfigError)
// and the user fields of the CRI LinuxContainerSecurityContext
// (determineEffectiveSecurityContext).

import { formatPod } from './events/kubelet-events.js';
import type { Image, LinuxContainerSecurityContext } from './runtime/types.js';

/** the user fields of a pod's or a container's securityContext */
export interface UserFields {
  runAsUser?: number | null;
  runAsGroup?: number | null;
  runAsNonRoot?: boolean | null;
}
/** the pod-level ones also give the container's supplementary groups */
export interface PodUserFields extends UserFields {
  fsGroup?: number | null;
  supplementalGroups?: number[] | null;
}

export interface UserPod {
  metadata: { name: string; namespace?: string; uid?: string };
  spec?: { securityContext?: PodUserFields | null } | null;
}
export interface UserContainer {
  name: string;
  securityContext?: UserFields | null;
}

/** the image's user as kubelet's getImageUser reads it: a numeric uid, else a name; neither set is root */
export interface ImageUser {
  uid?: number;
  username: string;
}

const set = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** DetermineEffectiveSecurityContext for the user fields: the container's value, else the pod's */
export function effectiveUser(pod: PodUserFields | null | undefined, container: UserFields | null | undefined): UserFields {
  const out: UserFields = {};
  for (const k of ['runAsUser', 'runAsGroup', 'runAsNonRoot'] as const) {
    const v = set(container?.[k]) ? container[k] : pod?.[k];
    if (set(v)) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** getImageUser: the ImageStatus's uid, else its username; an image with neither (or none at all) runs as root */
export function imageUser(image: Image | null | undefined): ImageUser {
  if (set(image?.uid)) return { uid: Number(image.uid.value), username: '' };
  if (image?.username) return { username: image.username };
  return { uid: 0, username: '' };
}

/** kube's validation.IsValidUserID bounds */
const MAX_USER_ID = 2147483647;

/**
 * verifyRunAsNonRoot: with an effective `runAsNonRoot: true`, the message why the container may not run —
 * an explicit runAsUser 0, or no runAsUser and an image running as root, as a name that cannot be checked,
 * or as an invalid uid — in kubelet's words; undefined when it may run
 */
export function verifyRunAsNonRoot(pod: UserPod, container: UserContainer, image: ImageUser): string | undefined {
  const sc = effectiveUser(pod.spec?.securityContext, container.securityContext);
  if (sc.runAsNonRoot !== true) return undefined;
  const who = `(pod: ${JSON.stringify(formatPod(pod))}, container: ${container.name})`;
  if (set(sc.runAsUser)) return sc.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${who}` : undefined;
  if (image.uid === undefined) {
    return image.username ? `container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root ${who}` : undefined;
  }
  if (image.uid === 0) return `container has runAsNonRoot and image will run as root ${who}`;
  if (image.uid < 0 || image.uid > MAX_USER_ID) {
    return `container has runAsNonRoot and image has an invalid user id (${image.uid}). (Must be 1-(${MAX_USER_ID})): must be between 0 and ${MAX_USER_ID}, inclusive ${who}`;
  }
  return undefined;
}

/**
 * determineEffectiveSecurityContext's user fields: runAsUser (else the image's uid, else its name as
 * run_as_username), runAsGroup, and the pod's fsGroup then supplementalGroups as supplementary groups
 */
export function runtimeUser(pod: UserPod, container: UserContainer, image: ImageUser): LinuxContainerSecurityContext {
  const sc = effectiveUser(pod.spec?.securityContext, container.securityContext);
  const out: LinuxContainerSecurityContext = {};
  if (set(sc.runAsUser)) out.runAsUser = { value: sc.runAsUser };
  else {
    if (image.uid !== undefined) out.runAsUser = { value: image.uid };
    if (image.username) out.runAsUsername = image.username;
  }
  if (set(sc.runAsGroup)) out.runAsGroup = { value: sc.runAsGroup };
  const podSc = pod.spec?.securityContext;
  const groups = [...(set(podSc?.fsGroup) ? [podSc.fsGroup] : []), ...(podSc?.supplementalGroups ?? [])];
  if (groups.length) out.supplementalGroups = groups;
  return out;
}
