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
