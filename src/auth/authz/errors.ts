// How kube prints several authorizer errors as one (utilerrors.Aggregate's
// Error()): one error bare, several as `[a, b]`, each distinct message once.
// The union authorizer and RBAC's rule resolution aggregate this way
// (spec 001 §5.12, §5.14).

/** the aggregate's text; undefined when there is no error */
export function aggregateErrors(errors: readonly string[] | undefined): string | undefined {
  if (!errors || errors.length === 0) return undefined;
  if (errors.length === 1) return errors[0];
  const distinct = [...new Set(errors)];
  return distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
}
