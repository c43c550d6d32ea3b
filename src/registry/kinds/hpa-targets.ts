// The TARGETS column of `kubectl get hpa` (kube 1.32's printers.go formatHPAMetrics):
// every metric of the spec against its current value in status.currentMetrics (the
// HorizontalPodAutoscaler controller writes them, src/controllers/autoscaling/), the
// first two shown and "+ N more..." after them. A metric without a current value
// (not read yet, or kube's `{type: ""}` for one that failed) shows `<unknown>`.

import type { JSONValue } from '../types.js';

type Obj = Record<string, JSONValue>;

const o = (v: JSONValue | undefined): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? v : undefined);
const text = (v: JSONValue | undefined): string => (v === undefined || v === null ? '<unknown>' : String(v));

/** one metric's cell: `cpu: 50%/80%`, `memory: 200Mi/100Mi`, `10/5 (avg)` … */
function cell(spec: Obj, status: Obj | undefined): string {
  const type = String(spec.type ?? '');
  const key = type === 'ContainerResource' ? 'containerResource' : type.charAt(0).toLowerCase() + type.slice(1);
  const source = o(spec[key]);
  const target = o(source?.target) ?? {};
  const current = o(o(status?.[key])?.current);
  switch (type) {
    case 'Resource':
    case 'ContainerResource': {
      const name = String(source?.name ?? '');
      if (target.averageValue !== undefined) return `${name}: ${current ? text(current.averageValue) : '<unknown>'}/${String(target.averageValue)}`;
      const cur = current?.averageUtilization !== undefined ? `${String(current.averageUtilization)}%` : '<unknown>';
      const want = target.averageUtilization !== undefined ? `${String(target.averageUtilization)}%` : '<auto>';
      return `${name}: ${cur}/${want}`;
    }
    case 'Pods':
      return `${current ? text(current.averageValue) : '<unknown>'}/${String(target.averageValue ?? '')}`;
    case 'Object':
    case 'External':
      return target.averageValue !== undefined
        ? `${current ? text(current.averageValue) : '<unknown>'}/${String(target.averageValue)} (avg)`
        : `${current ? text(current.value) : '<unknown>'}/${String(target.value ?? '')}`;
    default:
      return '<unknown type>';
  }
}

export function formatHpaTargets(specs: readonly JSONValue[], statuses: readonly JSONValue[]): string {
  if (specs.length === 0) return '<none>';
  const cells = specs.map((s, i) => cell(o(s) ?? {}, o(statuses[i])));
  const shown = cells.slice(0, 2).join(', ');
  return cells.length > 2 ? `${shown} + ${cells.length - 2} more...` : shown;
}
