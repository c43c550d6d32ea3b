// Kubernetes' Go zero values (docs/schemas.md "Zero shapes"). kube-apiserver
// decodes every write into Go structs and encodes every answer from them, so
// its JSON always carries the non-pointer struct fields (`"status": {}`,
// every container's `"resources": {}`) and the scalars whose json tag has no
// `omitempty` (a ReplicaSet's `status.replicas: 0`), present or not in what
// was written. A built-in kind declares those paths as its `zeroShape`; the
// generic store fills them in on every write and as it serves stored objects.

/** an object as the filler sees it (an ApiObject, or any JSON object inside one) */
type Obj = { [key: string]: unknown };

/** a list whose every (object) item has the shape: `spec.containers[*]` */
class EachItem {
  constructor(readonly item: ZeroShape) {}
}

/** a pointer struct: nothing is added when it is absent, its inside is filled when present */
class WhenPresent {
  constructor(readonly shape: ZeroShape) {}
}

/**
 * What a kind's Go type always encodes: a nested object is a non-pointer
 * struct (added as `{}` when absent, then filled), a scalar is a
 * non-omitempty field's zero value (`null` for a metav1.Time, which Go writes
 * so), `each` a list of structs, `whenPresent` a pointer struct.
 */
export interface ZeroShape {
  readonly [field: string]: ZeroNode;
}
export type ZeroNode = ZeroShape | string | number | boolean | null | EachItem | WhenPresent;

export const each = (item: ZeroShape): EachItem => new EachItem(item);
export const whenPresent = (shape: ZeroShape): WhenPresent => new WhenPresent(shape);

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `obj` with the shape's absent fields added (a `null` counts as absent, as
 * Go decodes it into the zero value). Present values are never changed, a
 * value of the wrong type is left to validation. Copy on write: the same
 * object when nothing was missing, else a copy sharing every untouched
 * subtree, so shared (cached) objects are never changed.
 */
export function withZeroShape<T extends object>(obj: T, shape: ZeroShape): T {
  return filledObject(obj as Obj, shape, false) as T;
}

/** fills `obj` itself, in place (a write's object, owned by the write); nothing without a shape */
export function fillZeroShape(obj: object, shape: ZeroShape | undefined): void {
  if (shape) filledObject(obj as Obj, shape, true);
}

/** `o` filled: in place, or copied where something was missing */
function filledObject(o: Obj, shape: ZeroShape, inPlace: boolean): Obj {
  let out: Obj | undefined;
  for (const k in shape) {
    const v = o[k];
    const filled = filledNode(v, shape[k]!, inPlace);
    if (filled !== v) (out ??= inPlace ? o : { ...o })[k] = filled;
  }
  return out ?? o;
}

function filledNode(v: unknown, node: ZeroNode, inPlace: boolean): unknown {
  // a zero metav1.Time without omitempty: Go writes `null` (the schema marks it x-orch-zero-null)
  if (node === null) return v === undefined ? null : v;
  if (typeof node !== 'object') return v === undefined || v === null ? node : v;
  if (node instanceof EachItem) {
    if (!Array.isArray(v)) return v;
    let items: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      if (!isObject(item)) continue;
      const f = filledObject(item, node.item, inPlace);
      if (f !== item) (items ??= v.slice())[i] = f;
    }
    return items ?? v;
  }
  if (node instanceof WhenPresent) return isObject(v) ? filledObject(v, node.shape, inPlace) : v;
  if (v === undefined || v === null) return filledObject({}, node, true);
  return isObject(v) ? filledObject(v, node, inPlace) : v;
}

// ---- shapes shared by several kinds (core/v1 structures they embed) ----

/** core/v1 Container (and EphemeralContainerCommon): `resources ResourceRequirements` */
const CONTAINER: ZeroShape = { resources: {} };

/** core/v1 PodSpec: every container of the three lists; a PreferredSchedulingTerm's `preference NodeSelectorTerm` */
export const POD_SPEC_SHAPE: ZeroShape = {
  containers: each(CONTAINER),
  initContainers: each(CONTAINER),
  ephemeralContainers: each(CONTAINER),
  affinity: whenPresent({ nodeAffinity: whenPresent({ preferredDuringSchedulingIgnoredDuringExecution: each({ preference: {} }) }) }),
};

/** core/v1 PodTemplateSpec: `metadata ObjectMeta`, `spec PodSpec` */
export const POD_TEMPLATE_SHAPE: ZeroShape = { metadata: {}, spec: POD_SPEC_SHAPE };

/** core/v1 PersistentVolumeClaim: spec (with `resources VolumeResourceRequirements`) and status */
export const PVC_SHAPE: ZeroShape = { spec: { resources: {} }, status: {} };

/** a kind whose Go type has only `spec` and `status` structs with nothing always encoded inside */
export const SPEC_STATUS_SHAPE: ZeroShape = { spec: {}, status: {} };
