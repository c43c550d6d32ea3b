// Field manager names (spec 000 §4.2, §4.3, §4.9): apply requires the
// `fieldManager` query parameter; other writes may omit it and are then
// attributed to the User-Agent's product part (what precedes the first `/`),
// the way Kubernetes infers it (`kubectl/v1.31.0 (linux/amd64)` → `kubectl`).

/** Longest manager name Kubernetes accepts (and the cut-off for inferred names), in bytes. */
export const MAX_FIELD_MANAGER_LENGTH = 128;

const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;

/** The User-Agent prefix before the first `/`, printable characters only, at most 128 bytes. */
export function fieldManagerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of prefix) {
    if (!PRINTABLE.test(ch)) continue;
    if (bytes >= MAX_FIELD_MANAGER_LENGTH) break;
    out += ch;
    bytes += Buffer.byteLength(ch, 'utf8');
  }
  return out;
}

/** `fieldManager` when given, else inferred from the User-Agent (non-apply writes only). */
export function inferFieldManager(fieldManager: string | null | undefined, userAgent: string | undefined): string {
  return fieldManager ? fieldManager : fieldManagerFromUserAgent(userAgent);
}

/** Why a `fieldManager` value is rejected, or undefined when it is fine. */
export function validateFieldManager(name: string): string | undefined {
  if (Buffer.byteLength(name, 'utf8') > MAX_FIELD_MANAGER_LENGTH) {
    return `must be no more than ${MAX_FIELD_MANAGER_LENGTH} characters`;
  }
  for (const ch of name) if (!PRINTABLE.test(ch)) return 'must only contain printable characters';
  return undefined;
}
