// The label and field selectors of a watch as one object filter.

import { compileFieldSelector } from '../machinery/selectors/fields.js';
import { matchesLabels } from '../machinery/selectors/labels.js';
import { throwAsStatus } from '../registry/status-table.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';
import type { WatchParams } from './params.js';
import type { ObjectFilter } from './watcher.js';

/** undefined when the watch selects nothing; a bad field selector throws its Status */
export function buildFilter(def: ResourceDefinition, p: WatchParams): ObjectFilter | undefined {
  const labels = p.labelSelector;
  let fields: ((o: ApiObject) => boolean) | undefined;
  if (p.fieldSelector.length > 0) {
    try {
      fields = compileFieldSelector(def, p.fieldSelector);
    } catch (e) {
      throwAsStatus(e);
    }
  }
  if (labels.length === 0 && !fields) return undefined;
  return (o) => (labels.length === 0 || matchesLabels(labels, o.metadata?.labels)) && (!fields || fields(o));
}

