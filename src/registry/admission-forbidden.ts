// The 403 kube's built-in admission plugins answer with (admission.NewForbidden
// in k8s.io/apiserver): `<resource[.group]> "<name>" is forbidden: <why>`, with
// the Status details kube gives (name, group when not core, kind = the
// resource). Shared by the plugins that refuse pods and classes.

import { type StatusError, forbidden, qualifiedResource } from '../core/errors.js';
import type { AdmissionCall } from './write-options.js';

/**
 * The name is the object's, else its generateName: kube's extractResourceName
 * reads the object because a create is admitted before its name is generated.
 */
export function admissionForbidden(c: AdmissionCall, why: string): StatusError {
  const meta = c.object?.metadata;
  const name = meta?.name || meta?.generateName || 'Unknown';
  const group = c.def.group;
  return forbidden(`${qualifiedResource(c.def.resource, group)} ${JSON.stringify(name)} is forbidden: ${why}`, { name, ...(group ? { group } : {}), kind: c.def.resource });
}
