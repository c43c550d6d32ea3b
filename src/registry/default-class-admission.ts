// kube-apiserver's DefaultStorageClass and DefaultIngressClass admission
// plugins (on by default): a new PersistentVolumeClaim that names no class
// (neither `spec.storageClassName`, not even "", nor the beta annotation) gets
// the default StorageClass, and a new Ingress without `spec.ingressClassName`
// or the `kubernetes.io/ingress.class` annotation the default IngressClass.
// The default is the class annotated `…/is-default-class: "true"`; of several,
// the newest, then the first by name (kube's GetDefaultClass since 1.28).

import type { WriteHooks } from './write-options.js';
import type { ApiObject } from './types.js';

export const DEFAULT_STORAGE_CLASS = 'DefaultStorageClass';
export const DEFAULT_INGRESS_CLASS = 'DefaultIngressClass';

export const STORAGE_DEFAULT_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];
const INGRESS_DEFAULT_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';
const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/** the default among `classes`: annotated true by one of `annotations`; the newest, then the first name */
export function defaultClassOf(classes: readonly ApiObject[], annotations: readonly string[]): ApiObject | undefined {
  const defaults = classes.filter((c) => annotations.some((a) => c.metadata?.annotations?.[a] === 'true'));
  const name = (o: ApiObject) => o.metadata?.name ?? '';
  defaults.sort((a, b) => (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? '') || name(a).localeCompare(name(b)));
  return defaults[0];
}

/** on a create of `resource` in `group`, `fill` sets the class when `has` says the object names none */
function defaulting(
  group: string,
  resource: string,
  classes: () => readonly ApiObject[],
  annotations: readonly string[],
  has: (o: ApiObject) => boolean,
  set: (spec: Record<string, unknown>, name: string) => void,
): Required<Pick<WriteHooks, 'mutate' | 'appliesTo'>> {
  return {
    appliesTo: (def) => def.group === group && def.resource === resource,
    async mutate(c) {
      if (c.operation !== 'CREATE' || c.opts.subresource || c.def.group !== group || c.def.resource !== resource || !c.object || has(c.object)) return c.object;
      const def = defaultClassOf(classes(), annotations);
      if (def) set((c.object.spec ??= {}) as Record<string, unknown>, def.metadata?.name ?? '');
      return c.object;
    },
  };
}

export function defaultStorageClassAdmission(storageClasses: () => readonly ApiObject[]): Required<Pick<WriteHooks, 'mutate' | 'appliesTo'>> {
  return defaulting('', 'persistentvolumeclaims', storageClasses, STORAGE_DEFAULT_ANNOTATIONS,
    (pvc) => (pvc.spec as { storageClassName?: unknown } | undefined)?.storageClassName != null || pvc.metadata?.annotations?.[BETA_STORAGE_CLASS] !== undefined,
    (spec, name) => (spec.storageClassName = name));
}

export function defaultIngressClassAdmission(networkingGroup: string, ingressClasses: () => readonly ApiObject[]): Required<Pick<WriteHooks, 'mutate' | 'appliesTo'>> {
  return defaulting(networkingGroup, 'ingresses', ingressClasses, [INGRESS_DEFAULT_ANNOTATION],
    (ing) => (ing.spec as { ingressClassName?: unknown } | undefined)?.ingressClassName != null || ing.metadata?.annotations?.[INGRESS_CLASS_ANNOTATION] !== undefined,
    (spec, name) => (spec.ingressClassName = name));
}
