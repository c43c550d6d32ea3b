// core/v1 ComponentStatus (`kubectl get componentstatuses`, `cs`): deprecated
// in Kubernetes 1.19 and still served by 1.32, read-only and computed on every
// request (kube's pkg/registry/core/componentstatus: no storage, get and list
// only, no watch). Each row is the answer of one probe; the server supplies
// the probes (`withComponentProbes`: the store for `etcd-0`, the leader-run
// scheduler and controllers for `scheduler` and `controller-manager`), so this
// kind knows nothing of them. Without probes the list is empty.

import { internalError } from '../../core/errors.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import { listMap, obj, proto, str } from '../../machinery/schema/dsl.js';
import type { Capabilities } from '../capabilities.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import { kindSchema } from './meta.js';

/** what one probe found: kube's probe.Result as the condition status, its message and error */
export interface ComponentHealth {
  /** true = Healthy, false = Unhealthy, undefined = Unknown */
  healthy: boolean | undefined;
  message: string;
  error: string;
}

export interface ComponentProbe {
  /** the row's name: `scheduler`, `controller-manager`, `etcd-0` */
  name: string;
  check(): Promise<ComponentHealth>;
}

export function componentStatusDefinition(n: SchemaNames, probes: () => readonly ComponentProbe[] = () => []): ResourceDefinition {
  const condition = obj('Information about the condition of a component.', proto({ type: 1, status: 2, message: 3, error: 4 }, {
    type: str('Type of condition for a component. Valid value: "Healthy"'),
    status: str('Status of the condition for a component. Valid values for "Healthy": "True", "False", or "Unknown".'),
    message: str('Message about the condition for a component. For example, information about a health check.'),
    error: str('Condition error code for a component. For example, a health check error code.'),
  }), ['type', 'status']);
  const cell = (pick: (c: Record<string, unknown> | undefined) => string) => (o: ApiObject): string =>
    pick(((o as { conditions?: Record<string, unknown>[] }).conditions ?? []).find((c) => c.type === 'Healthy'));
  return {
    group: '',
    version: 'v1',
    kind: 'ComponentStatus',
    resource: 'componentstatuses',
    singular: 'componentstatus',
    scope: 'Cluster',
    shortNames: ['cs'],
    verbs: ['get', 'list'],
    deprecated: { deprecatedRelease: '1.19' },
    schema: kindSchema(n, 'ComponentStatus (and ComponentStatusList) holds the cluster validation info. Deprecated: This API is deprecated in v1.19+', proto({ conditions: 2 }, {
      conditions: listMap('List of component conditions observed', condition, ['type'], 'type'),
    })),
    strategy: {
      // kube's printComponentStatus: Name, Status, Message, Error (no Age: the objects have no creation time)
      exactColumns: true,
      columns: [
        { name: 'Status', type: 'string', description: 'Status of the component conditions', cell: cell((c) => (c === undefined ? 'Unknown' : c.status === 'True' ? 'Healthy' : 'Unhealthy')) },
        { name: 'Message', type: 'string', description: 'Message of the component conditions', cell: cell((c) => String(c?.message ?? '')) },
        { name: 'Error', type: 'string', description: 'Error of the component conditions', cell: cell((c) => String(c?.error ?? '')) },
      ],
    },
    capabilities: { '': componentStatusCapabilities(probes) },
  };
}

/** the same definition with the server's probes (the composition root calls this once its parts run) */
export function withComponentProbes(def: ResourceDefinition, probes: () => readonly ComponentProbe[]): ResourceDefinition {
  return { ...def, capabilities: { ...def.capabilities, '': componentStatusCapabilities(probes) } };
}

function componentStatusCapabilities(probes: () => readonly ComponentProbe[]): Capabilities {
  return {
    async get(ctx) {
      const probe = probes().find((p) => p.name === ctx.name);
      // kube answers an unknown name with a plain error, hence a 500 (componentstatus/rest.go Get)
      if (!probe) throw internalError(`Component not found: ${ctx.name}`);
      return { status: 200, object: await componentStatus(probe) };
    },
    async list() {
      // the probes run concurrently, as kube's List does
      return { items: await Promise.all(probes().map(componentStatus)) };
    },
  };
}

/** kube's getComponentStatus: one `Healthy` condition; an empty error is left out */
async function componentStatus(probe: ComponentProbe): Promise<ApiObject> {
  let h: ComponentHealth;
  try {
    h = await probe.check();
  } catch (e) {
    h = { healthy: false, message: '', error: (e as Error).message };
  }
  const condition: Record<string, string> = { type: 'Healthy', status: h.healthy === undefined ? 'Unknown' : h.healthy ? 'True' : 'False' };
  if (h.message) condition.message = h.message;
  if (h.error) condition.error = h.error;
  // kube's zero creationTimestamp is written as null (metav1.Time has no omitempty form)
  return { kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: probe.name, creationTimestamp: null }, conditions: [condition] } as unknown as ApiObject;
}
