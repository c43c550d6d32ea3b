// The pod's /etc/hosts, as kubelet 1.32 manages it (pkg/kubelet/kubelet_pods.go;
// docs/nodeagent.md "Pods"). Every container of a pod gets the file
// `<root-dir>/pods/<uid>/etc-hosts` mounted (read-write) at /etc/hosts, written
// when the container is created from the sandbox's IPs:
//
//   # Kubernetes-managed hosts file.
//   127.0.0.1<TAB>localhost, the IPv6 loopback and multicast names,
//   one line per pod IP: `<ip><TAB><hostname>`, or with a subdomain
//   `<ip><TAB><hostname>.<subdomain>.<ns>.svc.<cluster domain><TAB><hostname>`,
//
// then, when the pod has hostAliases, an empty line, `# Entries added by
// HostAliases.` and one line per alias: its IP and its hostnames, tab-separated.
// A hostNetwork pod's file is the node's /etc/hosts under the header
// `# Kubernetes-managed hosts file (host network).`, with the same alias lines.
// Not mounted: into a container that mounts something at /etc/hosts itself,
// and while the pod has no IP (kubelet's shouldMountHostsFile).

import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Mount } from './runtime/types.js';

export const ETC_HOSTS_PATH = '/etc/hosts';
const MANAGED_HEADER = '# Kubernetes-managed hosts file.\n';
const HOST_NETWORK_HEADER = '# Kubernetes-managed hosts file (host network).\n';
const HOSTNAME_MAX = 63;

export interface HostAlias {
  ip?: string;
  hostnames?: string[];
}

/** the pod fields the file depends on */
export interface HostsPod {
  metadata: { name: string; namespace?: string; uid?: string };
  spec: { hostname?: string; subdomain?: string; hostNetwork?: boolean; hostAliases?: HostAlias[] };
}

/** a hosts file that cannot be made (the node's unreadable): the container waits with CreateContainerConfigError */
export class HostsFileError extends Error {}

/**
 * kubelet's GeneratePodHostNameAndDomain: `spec.hostname`, else the pod's
 * name, cut to 63 characters without a trailing `-` or `.`; the domain
 * `<subdomain>.<namespace>.svc.<cluster domain>` when the pod has a subdomain
 */
export function podHostnameAndDomain(pod: HostsPod, clusterDomain: string): { hostname: string; domain: string } {
  let hostname = pod.spec.hostname || pod.metadata.name;
  if (hostname.length > HOSTNAME_MAX) hostname = hostname.slice(0, HOSTNAME_MAX).replace(/[-.]+$/, '');
  const domain = pod.spec.subdomain ? `${pod.spec.subdomain}.${pod.metadata.namespace ?? 'default'}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/** the lines hostAliases add (none without aliases) */
export function hostAliasEntries(aliases: readonly HostAlias[] | undefined): string {
  if (!aliases?.length) return '';
  return `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`).join('')}`;
}

/** kubelet's managedHostsFileContent: the file of a pod on the pod network */
export function managedHostsContent(podIPs: readonly string[], hostname: string, domain: string, aliases?: readonly HostAlias[]): string {
  const names = domain ? `${hostname}.${domain}\t${hostname}` : hostname;
  return [
    MANAGED_HEADER,
    '127.0.0.1\tlocalhost\n',
    '::1\tlocalhost ip6-localhost ip6-loopback\n',
    'fe00::0\tip6-localnet\n',
    'fe00::0\tip6-mcastprefix\n',
    'fe00::1\tip6-allnodes\n',
    'fe00::2\tip6-allrouters\n',
    ...podIPs.map((ip) => `${ip}\t${names}\n`),
    hostAliasEntries(aliases),
  ].join('');
}

/** kubelet's nodeHostsFileContent: the file of a hostNetwork pod, from the node's */
export function hostNetworkHostsContent(nodeHosts: string, aliases?: readonly HostAlias[]): string {
  return HOST_NETWORK_HEADER + nodeHosts + hostAliasEntries(aliases);
}

/** kubelet's shouldMountHostsFile and makeMounts' check: the pod has an IP (or the host's network) and the container mounts nothing at /etc/hosts */
export function mountsHostsFile(pod: HostsPod, podIPs: readonly string[], container: { volumeMounts?: { mountPath: string }[] }): boolean {
  if (podIPs.length === 0 && !pod.spec.hostNetwork) return false;
  return !(container.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS_PATH);
}

export interface EtcHostsOptions {
  rootDir: string;
  /** kubelet's clusterDomain (the agent's configuration) */
  clusterDomain: string;
  /** the node's hosts file, read for hostNetwork pods (default /etc/hosts) */
  nodeHostsFile?: string;
}

/** writes a pod's file and answers the container's mount of it (kubelet's makeHostsMount) */
export class EtcHosts {
  constructor(private readonly o: EtcHostsOptions) {}

  /** `<root-dir>/pods/<uid>/etc-hosts`; it goes with the pod's directory */
  path(uid: string): string {
    return join(this.o.rootDir, 'pods', uid, 'etc-hosts');
  }

  /** the container's /etc/hosts mount, the file (re)written first; none when kubelet would not mount it */
  async mount(pod: HostsPod, podIPs: readonly string[], container: { volumeMounts?: { mountPath: string }[] }): Promise<Mount[]> {
    if (!mountsHostsFile(pod, podIPs, container)) return [];
    const content = await this.content(pod, podIPs);
    const hostPath = this.path(pod.metadata.uid!);
    // kubelet rewrites the file at every container creation; in place (a runtime's bind mounts keep the inode), and only when it changed
    const old = await readFile(hostPath, 'utf8').catch(() => undefined);
    if (old !== content) {
      await mkdir(dirname(hostPath), { recursive: true });
      await writeFile(hostPath, content);
      await chmod(hostPath, 0o644);
    }
    return [{ containerPath: ETC_HOSTS_PATH, hostPath }];
  }

  private async content(pod: HostsPod, podIPs: readonly string[]): Promise<string> {
    if (!pod.spec.hostNetwork) {
      const { hostname, domain } = podHostnameAndDomain(pod, this.o.clusterDomain);
      return managedHostsContent(podIPs, hostname, domain, pod.spec.hostAliases);
    }
    const file = this.o.nodeHostsFile ?? ETC_HOSTS_PATH;
    try {
      return hostNetworkHostsContent(await readFile(file, 'utf8'), pod.spec.hostAliases);
    } catch (e) {
      // Go's os.ReadFile error, as kubelet reports it
      const err = e as NodeJS.ErrnoException;
      const why = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
      throw new HostsFileError(`open ${file}: ${why}`);
    }
  }
}
