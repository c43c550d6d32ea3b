// The attributes one request is authorized with (spec 001 §2.2, §5.13):
// everything RequestInfo knows plus, for list, watch and deletecollection,
// the parsed label and field selector requirements (AuthorizeWithSelectors,
// §5.15, §5.16) in SubjectAccessReview form (`=`/`==`/`in` → In, `!=`/
// `notin` → NotIn, `key` → Exists, `!key` → DoesNotExist; `gt`/`lt` have no
// review form and are left out). A selector that does not parse is left out
// too: the handler answers 400 for it after authorization, as kube does. Like
// kube, a list or watch with `metadata.name=<n>` is authorized for name <n>,
// so a `resourceNames` grant covers watching one object.

import type { RequestAttributes, SelectorRequirement } from '../auth/authz/types.js';
import type { UserInfo } from '../auth/types.js';
import type { RequestInfo } from '../api/request.js';
import { exactName, parseFieldSelector } from '../machinery/selectors/fields.js';
import { type LabelOp, parseLabelSelector } from '../machinery/selectors/labels.js';

const SELECTOR_VERBS = new Set(['list', 'watch', 'deletecollection']);
const LABEL_OPERATORS: Partial<Record<LabelOp, string>> = { '=': 'In', in: 'In', '!=': 'NotIn', notin: 'NotIn', exists: 'Exists', '!': 'DoesNotExist' };

export function authorizationAttributes(user: UserInfo, info: RequestInfo, path: string, query: URLSearchParams): RequestAttributes {
  const attrs: RequestAttributes = {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path,
    apiGroup: info.group,
    apiVersion: info.version,
    namespace: info.namespace,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  };
  if (!info.isResourceRequest || !SELECTOR_VERBS.has(info.verb)) return attrs;
  const labels = query.get('labelSelector');
  if (labels) {
    const reqs = tryParse(() =>
      parseLabelSelector(labels).flatMap((r): SelectorRequirement[] => {
        const operator = LABEL_OPERATORS[r.op];
        if (!operator) return [];
        return [operator === 'Exists' || operator === 'DoesNotExist' ? { key: r.key, operator } : { key: r.key, operator, values: r.values }];
      }),
    );
    if (reqs?.length) attrs.labelSelector = reqs;
  }
  const fields = query.get('fieldSelector');
  if (fields) {
    const sel = tryParse(() => parseFieldSelector(fields));
    if (sel?.length) {
      attrs.fieldSelector = sel.map((r) => ({ key: r.field, operator: r.op === '=' ? 'In' : 'NotIn', values: [r.value] }));
      const name = info.verb !== 'deletecollection' ? exactName(sel) : undefined;
      if (name !== undefined && attrs.name === '' && /^[^/%]+$/.test(name) && name !== '.' && name !== '..') attrs.name = name;
    }
  }
  return attrs;
}

function tryParse<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}
