// What the simulated runtime knows of an image's config (docs/nodeagent.md
// "What the simulator runs"): images are not unpacked, so the few configs
// kube's e2e tests depend on are written down here — the USER of the images
// run as non-root, and the ENTRYPOINT and CMD of the test image whose defaults
// the tests check (agnhost: `/agnhost pause`). Every other image has no USER
// (kubelet takes it for root) and no ENTRYPOINT/CMD (its container then runs
// the pod's command and args as given).

import type { ContainerConfig } from './types.js';

export interface SimImageConfig {
  /** the config's USER: `uid`, `name` or `uid:gid` */
  user?: string;
  entrypoint?: readonly string[];
  cmd?: readonly string[];
}

export const AGNHOST_REPOSITORY = 'registry.k8s.io/e2e-test-images/agnhost';

const IMAGE_CONFIGS: ReadonlyMap<string, SimImageConfig> = new Map<string, SimImageConfig>([
  // kube's test/images/nonroot (the runAsNonRoot tests' "image specified user ID" 1234)
  ['registry.k8s.io/e2e-test-images/nonroot', { user: '1234' }],
  ['registry.k8s.io/pause', { user: '65535:65535' }],
  // test/images/agnhost/Dockerfile: ENTRYPOINT ["/agnhost"], CMD ["pause"]
  [AGNHOST_REPOSITORY, { entrypoint: ['/agnhost'], cmd: ['pause'] }],
]);

/** the repository of an image reference: without its digest and tag */
export function imageRepository(image: string): string {
  const name = image.split('@')[0]!;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  return colon > slash ? name.slice(0, colon) : name;
}

export const imageConfig = (image: string): SimImageConfig | undefined => IMAGE_CONFIGS.get(imageRepository(image));

/**
 * the container's process arguments as containerd makes them from the CRI
 * config and the image (Docker's rule): no command → the image's ENTRYPOINT,
 * followed by the args, or the image's CMD when there are no args either; a
 * command replaces the ENTRYPOINT and drops the CMD
 */
export function withImageDefaults(config: ContainerConfig): ContainerConfig {
  const image = imageConfig(config.image.image);
  if (!image?.entrypoint && !image?.cmd) return config;
  if (config.command?.length) return config;
  const args = config.args?.length ? config.args : [...(image.cmd ?? [])];
  return { ...config, command: [...(image.entrypoint ?? [])], args };
}
