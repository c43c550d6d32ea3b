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

/** namespaces that exist from the start, re-created when missing (controllers/system-namespaces.ts) */
export function builtinNamespacesOf(apiDomain: string): string[] {
  const ns = systemNamespacesOf(apiDomain);
  return ['default', ns.system, ns.public, ns.nodeLease];
}

/** the built-in namespaces that may not be deleted: kube's NamespaceLifecycle set (the node-lease one may) */
export function immortalNamespacesOf(apiDomain: string): string[] {
  const ns = systemNamespacesOf(apiDomain);
  return ['default', ns.system, ns.public];
}

/** the ConfigMap with the cluster CA in every namespace (kube's root-ca-cert-publisher) */
export function rootCAConfigMapName(apiDomain: string): string {
  return `${productWordOf(apiDomain)}-root-ca.crt`;
}

/** the wording of a node's Ready condition (spec 002 §8) */
export interface NodeReadyWording {
  readyReason: string;
  readyMessage: string;
  notReadyReason: string;
}

/**
 * The node agent's Ready reasons and message: kubelet's with the Kubernetes API
 * domain (`KubeletReady`, `kubelet is posting ready status`, `KubeletNotReady`:
 * what dashboards, scripts and `kubectl describe node` readers match), the
 * agent's own otherwise.
 */
export function nodeReadyWording(apiDomain: string): NodeReadyWording {
  return productWordOf(apiDomain) === 'kube'
    ? { readyReason: 'KubeletReady', readyMessage: 'kubelet is posting ready status', notReadyReason: 'KubeletNotReady' }
    : { readyReason: 'NodeAgentReady', readyMessage: 'node agent is posting ready status', notReadyReason: 'ContainerRuntimeNotReady' };
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

/**
 * The built-in certificate signers (kube's `kubernetes.io/kube-apiserver-client`
 * and friends, spec 001 §5.3): `<label domain>/<name>`, the label domain being
 * `kubernetes.io` for `--api-domain k8s.io` and the API domain otherwise, and
 * `kube-apiserver` spelt with the product word (`orch.io/orch-apiserver-client`).
 * The signing and approving controllers, the CSR validation and the node
 * agent's TLS bootstrap all take them from here.
 */
export interface SignerNames {
  /** client certificates for the API server (any subject) */
  apiServerClient: string;
  /** a node agent's client certificate: O=system:nodes, CN=system:node:<name> */
  kubeletClient: string;
  /** a node agent's serving certificate */
  kubeletServing: string;
  /** no rules; cannot be requested through certificates/v1 */
  legacyUnknown: string;
}

export function signerNamesOf(apiDomain: string): SignerNames {
  const domain = apiDomain === 'k8s.io' ? 'kubernetes.io' : apiDomain;
  const w = productWordOf(apiDomain);
  return {
    apiServerClient: `${domain}/${w}-apiserver-client`,
    kubeletClient: `${domain}/${w}-apiserver-client-kubelet`,
    kubeletServing: `${domain}/kubelet-serving`,
    legacyUnknown: `${domain}/legacy-unknown`,
  };
}
