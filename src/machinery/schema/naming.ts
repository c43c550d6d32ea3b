// Definition names in the served OpenAPI documents, built like Kubernetes'
// from the API domain (docs/schemas.md "OpenAPI naming"):
//   core group ''                 → <rev>.api.core.<version>.<Kind>
//   '<x>.<domain>' or 'apps'      → <rev>.api.<first label of x>.<version>.<Kind>
//   apiextensions.<domain>        → <rev>.apiextensions-apiserver.pkg.apis.apiextensions.<version>.<Kind>
//   apiregistration.<domain>      → <rev>.kube-aggregator.pkg.apis.apiregistration.<version>.<Kind>
//   any other group (custom)      → <reversed group>.<version>.<Kind>
//   object metadata and friends   → <rev>.apimachinery.pkg.apis.meta.v1.<Kind>
// where <rev> is the reversed API domain (`orch.io` → `io.orch`), so with
// `--api-domain k8s.io` the names are exactly Kubernetes' (`io.k8s.api.core.v1.Pod`).

export function reversedDomain(domain: string): string {
  return domain.split('.').reverse().join('.');
}

export function definitionName(apiDomain: string, group: string, version: string, kind: string): string {
  const rev = reversedDomain(apiDomain);
  if (group === '') return `${rev}.api.core.${version}.${kind}`;
  // the groups Kubernetes serves from other Go modules (metrics-server's included) keep those modules' names (clients key on them)
  if (group === `apiextensions.${apiDomain}`) return `${rev}.apiextensions-apiserver.pkg.apis.apiextensions.${version}.${kind}`;
  if (group === `apiregistration.${apiDomain}`) return `${rev}.kube-aggregator.pkg.apis.apiregistration.${version}.${kind}`;
  if (group === `metrics.${apiDomain}`) return `${rev}.metrics.pkg.apis.metrics.${version}.${kind}`;
  if (group.endsWith(`.${apiDomain}`)) return `${rev}.api.${group.split('.')[0]}.${version}.${kind}`;
  if (!group.includes('.')) return `${rev}.api.${group}.${version}.${kind}`;
  return `${reversedDomain(group)}.${version}.${kind}`;
}

/**
 * a custom resource's definition name: always kube's REST-friendly reversed group
 * (openapiutil.ToRESTFriendlyName of `<group>/<version>/<kind>`), also for a group under the API domain
 * (`snapshot.storage.k8s.io` → `io.k8s.storage.snapshot.v1.VolumeSnapshot`), which built-in kinds name otherwise
 */
export function customResourceDefinitionName(group: string, version: string, kind: string): string {
  return `${reversedDomain(group)}.${version}.${kind}`;
}

/** shared names used by every kind's schema */
export class SchemaNames {
  readonly rev: string;
  constructor(readonly apiDomain: string) {
    this.rev = reversedDomain(apiDomain);
  }

  meta(kind: string): string {
    return `${this.rev}.apimachinery.pkg.apis.meta.v1.${kind}`;
  }

  core(kind: string): string {
    return `${this.rev}.api.core.v1.${kind}`;
  }

  kind(group: string, version: string, kind: string): string {
    return definitionName(this.apiDomain, group, version, kind);
  }

  get quantity(): string {
    return `${this.rev}.apimachinery.pkg.api.resource.Quantity`;
  }

  get intOrString(): string {
    return `${this.rev}.apimachinery.pkg.util.intstr.IntOrString`;
  }

  /** `rbac.authorization.<domain>` etc. */
  group(prefix: string): string {
    return `${prefix}.${this.apiDomain}`;
  }
}
