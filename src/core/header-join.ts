// How a repeated request header reaches the handlers, which see one string a
// name: joined with ", " (RFC 9110 §5.3), except the impersonation headers,
// where kube reads every field line as one value (`--as-group=,,,chameleon` is
// one group), so their lines are joined with NUL, which no field value may hold.

/** separates the field lines of a repeated impersonation header */
export const FIELD_LINE_SEPARATOR = '\u0000';

function keepsLines(name: string): boolean {
  return name === 'impersonate-group' || name.startsWith('impersonate-extra-');
}

/** `prev` (undefined: the first line) and a further line of header `name` (lower case) as one value */
export function joinHeaderLine(name: string, prev: string | undefined, value: string): string {
  if (prev === undefined) return value;
  return `${prev}${keepsLines(name) ? FIELD_LINE_SEPARATOR : ', '}${value}`;
}

/**
 * HTTP/2 headers with the impersonation lines kept apart: Node joins repeated
 * fields with ", " in its headers object, so they are read again from the raw list.
 */
export function h2HeaderValue(name: string, value: string | string[] | undefined, raw: readonly string[] | undefined): string | undefined {
  if (value === undefined || !keepsLines(name) || raw === undefined) return Array.isArray(value) ? value.join(', ') : value;
  let out: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out = joinHeaderLine(name, out, raw[i + 1]!);
  return out ?? (Array.isArray(value) ? value.join(', ') : value);
}
