// The field selector of a list/watch/deletecollection as authorization
// requirements (spec 001 §5.15 AuthorizeNodeWithSelectors, §2.3): `=`/`==`
// become In, `!=` NotIn. A selector that does not parse carries nothing; the
// request itself then fails with 400 in the handler, as in Kubernetes.

import { parseFieldSelector } from '../machinery/selectors/fields.js';
import type { SelectorRequirement } from '../auth/authz/types.js';

const COLLECTION_VERBS = new Set(['list', 'watch', 'deletecollection']);

export function fieldSelectorRequirements(verb: string, query: URLSearchParams): SelectorRequirement[] | undefined {
  const text = query.get('fieldSelector');
  if (!text || !COLLECTION_VERBS.has(verb)) return undefined;
  try {
    return parseFieldSelector(text).map((r) => ({ key: r.field, operator: r.op === '=' ? 'In' : 'NotIn', values: [r.value] }));
  } catch {
    return undefined;
  }
}
