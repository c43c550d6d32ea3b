// Table representation (spec 000 §2.3): `Accept: application/json;as=Table;g=meta.<domain>;v=v1`.
// Kinds without columns get the default two-column table (Name, Created At);
// kinds with strategy columns get Name, the columns, and Age as kubectl shows.

import type { ApiObject, ResourceDefinition, TableColumn } from './types.js';

export interface TableOptions {
  group: string;
  version: string;
  /** `includeObject` query: None | Metadata (default) | Object */
  includeObject: 'None' | 'Metadata' | 'Object';
  /** ms since the epoch, from the server's clock (src/core/clock.ts): ages are relative to it */
  now: number;
}

export interface ListMetaLike {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

const NAME_COLUMN = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.',
  priority: 0,
};

const AGE_COLUMN = {
  name: 'Age',
  type: 'string',
  format: '',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.',
  priority: 0,
};
/** a marker for where Age goes among the strategy columns */
const AGE: TableColumn = { name: 'Age', type: 'string', cell: () => null };

export function toTable(def: ResourceDefinition, objects: ApiObject[], listMeta: ListMetaLike, opts: TableOptions): object {
  const now = opts.now;
  const custom = def.strategy.columns;
  const nameLast = def.strategy.nameColumnLast === true && !!custom?.length;
  const nameCell = (o: ApiObject): unknown => o.metadata?.name ?? '';
  const columnDefinitions: object[] = nameLast ? [] : [NAME_COLUMN];
  const cells: ((o: ApiObject) => unknown)[] = nameLast ? [] : [nameCell];
  if (custom && custom.length > 0) {
    // Age goes after the default columns and before the wide (priority > 0) ones, as kubectl prints it,
    // unless the kind places an `Age` column itself (Nodes: Roles, Age, Version)
    const placed = def.strategy.exactColumns === true || custom.some((c) => c.name === 'Age');
    const ordered = placed ? custom : [...custom.filter((c) => !c.priority), AGE, ...custom.filter((c) => c.priority)];
    for (const c of ordered) {
      if (c === AGE || (c.name === 'Age' && !def.strategy.exactColumns)) {
        columnDefinitions.push(AGE_COLUMN);
        cells.push((o) => age(o.metadata?.creationTimestamp, now));
        continue;
      }
      columnDefinitions.push(columnDef(c));
      cells.push((o) => c.cell(o, now));
    }
    if (nameLast) {
      columnDefinitions.push({ ...NAME_COLUMN, priority: 1 });
      cells.push(nameCell);
    }
  } else {
    columnDefinitions.push({
      name: 'Created At',
      type: 'date',
      format: '',
      description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
      priority: 0,
    });
    cells.push((o) => o.metadata?.creationTimestamp ?? null);
  }
  const metaGroup = opts.group;
  const rows = objects.map((o) => tableRow(o, cells.map((f) => f(o)), opts));
  const metadata: Record<string, unknown> = {};
  if (listMeta.resourceVersion !== undefined) metadata.resourceVersion = listMeta.resourceVersion;
  if (listMeta.continue) metadata.continue = listMeta.continue;
  if (listMeta.remainingItemCount !== undefined) metadata.remainingItemCount = listMeta.remainingItemCount;
  return { kind: 'Table', apiVersion: `${metaGroup}/${opts.version}`, metadata, columnDefinitions, rows };
}

/** a row with its object as `includeObject` asks (Metadata: a PartialObjectMetadata) */
function tableRow(o: ApiObject, cells: unknown[], opts: Pick<TableOptions, 'group' | 'version' | 'includeObject'>): Record<string, unknown> {
  const row: Record<string, unknown> = { cells };
  if (opts.includeObject === 'Object') row.object = o;
  else if (opts.includeObject === 'Metadata') row.object = { kind: 'PartialObjectMetadata', apiVersion: `${opts.group}/${opts.version}`, metadata: o.metadata ?? {} };
  return row;
}

/** kube's table of an autoscaling/v1 Scale (printScale; `kubectl get deploy x --subresource=scale`) */
export function scaleTable(scale: ApiObject, opts: Pick<TableOptions, 'group' | 'version' | 'includeObject'>): object {
  const replicas = (part: unknown): unknown => (part as { replicas?: unknown } | undefined)?.replicas ?? 0;
  return {
    kind: 'Table',
    apiVersion: `${opts.group}/${opts.version}`,
    metadata: scale.metadata?.resourceVersion === undefined ? {} : { resourceVersion: scale.metadata.resourceVersion },
    columnDefinitions: [
      NAME_COLUMN,
      { name: 'Desired', type: 'integer', format: '', description: 'Number of desired replicas', priority: 0 },
      { name: 'Available', type: 'integer', format: '', description: 'Number of actual replicas', priority: 0 },
    ],
    rows: [tableRow(scale, [scale.metadata?.name ?? '', replicas(scale.spec), replicas(scale.status)], opts)],
  };
}

function columnDef(c: TableColumn): object {
  return { name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 };
}

/** kubectl's short human duration (e.g. 45s, 12m, 3h5m, 2d, 1y) */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60 * 2) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 60 * 3) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  const y = Math.floor(h / 24 / 365);
  if (y < 8) {
    const d = Math.floor(h / 24) % 365;
    return d === 0 ? `${y}y` : `${y}y${d}d`;
  }
  return `${y}y`;
}

function age(ts: string | undefined, now: number): string {
  if (!ts) return '<unknown>';
  const t = Date.parse(ts);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}
