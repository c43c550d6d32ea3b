// Names that carry the product word (spec 000/001 preambles: `orch` stands
// where Kubernetes says `kube`, e.g. `orch-system`, `orch-root-ca.crt`). With
// `--api-domain k8s.io` the groups are Kubernetes' own and so are these
// names (`kube-system`, `kube-node-lease`, `kube-root-ca.crt`), so that
// unmodified tools find them: `kubectl describe node` reads its Lease from
// `kube-node-lease`, operators install into `kube-system`. The server, its
// controllers and authorizers, and the node agent all take them from here.

/** `kube` with the Kubernetes API domain, else `orch` */
export function productWordOf(apiDomain: string): 'kube' | 'orch' {
  return apiDomain === 'k8s.io' ? 'kube' : 'orch';
}

/** the namespaces that exist from the start besides `default` */
export interface SystemNamespaces {
  /** control-plane service accounts, leases, bootstrap token Secrets (`orch-system`) */
  system: string;
  /** the signed `cluster-info` ConfigMap (`orch-public`) */
  public: string;
  /** node heartbeat Leases (`orch-node-lease`, spec 002 §2.2) */
  nodeLease: string;
}

export function systemNamespacesOf(apiDomain: string): SystemNamespaces {
  const w = productWordOf(apiDomain);
  return { system: `${w}-system`, public: `${w}-public`, nodeLease: `${w}-node-lease` };
}

/** namespaces that exist from the start and may not be deleted */
export function builtinNamespacesOf(apiDomain: string): string[] {
  const ns = systemNamespacesOf(apiDomain);
  return ['default', ns.system, ns.public, ns.nodeLease];
}

/** the ConfigMap with the cluster CA in every namespace (kube's root-ca-cert-publisher) */
export function rootCAConfigMapName(apiDomain: string): string {
  return `${productWordOf(apiDomain)}-root-ca.crt`;
}

/**
 * Where the ServiceAccount admission plugin mounts a pod's token, CA and
 * namespace (spec 001 §5.5, "a predictable place"): kube's
 * `/var/run/secrets/kubernetes.io/serviceaccount`, the `kubernetes.io` being
 * the label domain (`orch.io` with the default API domain, as for node taints
 * and annotations; `kubernetes.io` with `--api-domain k8s.io`, so that
 * client-go's in-cluster configuration finds it unchanged).
 */
export function serviceAccountMountPath(apiDomain: string): string {
  return `/var/run/secrets/${apiDomain === 'k8s.io' ? 'kubernetes.io' : apiDomain}/serviceaccount`;
}
