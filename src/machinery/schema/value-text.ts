// Small value helpers of the schema walk (validate.ts): how kube prints and
// counts values, and the syntaxes it checks by hand (quantities, base64).

/** key-order independent JSON, for set-list duplicate detection */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(',')}}`;
}

/** the type word JSON Schema validators print for a value */
export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** how Kubernetes prints a bad value in `Invalid value: <v>` */
export function badValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** kube-openapi's type word of an int-or-string (`type: [integer, string]`, validate/type.go joins them) */
export const INT_OR_STRING = 'integer,string';

/** code points, as Go's utf8.RuneCount of the UTF-8 text */
export function runeCount(v: string): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < v.length) {
      const d = v.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Kubernetes resource.Quantity syntax */
export const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

/**
 * Standard base64 with padding, as Go's encoding/json decodes []byte (CR and LF
 * are ignored). Returns the offset of the first illegal byte, or -1.
 */
export function base64Error(s: string): number {
  let n = 0;
  let pad = 0;
  let lastIndex = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || c === 13) continue;
    lastIndex = i;
    if (c === 61 /* = */) {
      pad++;
      if (pad > 2) return i;
      n++;
      continue;
    }
    if (pad > 0) return i;
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (!ok) return i;
    n++;
  }
  if (n % 4 !== 0) return n === 0 ? -1 : lastIndex - (n % 4) + 1;
  return -1;
}
