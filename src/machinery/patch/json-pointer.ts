// RFC 6901 JSON Pointer parsing, as used by JSON Patch (RFC 6902 §4).

import { PatchError } from './errors.js';

/** Splits a pointer into unescaped reference tokens; `""` is the whole document. */
export function parsePointer(pointer: string, what: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new PatchError('Invalid', `${what}: JSON Pointer "${pointer}" must be empty or start with "/"`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      // RFC 6901 §3: "~" is only valid as "~0" or "~1"; "~1" is decoded before "~0"
      if (/~[^01]|~$/.test(token)) {
        throw new PatchError('Invalid', `${what}: invalid escape sequence in JSON Pointer "${pointer}"`);
      }
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/**
 * An array index token (RFC 6901 §4): decimal digits without leading zeros.
 * Returns undefined for anything else (including "-", which callers handle).
 */
export function parseArrayIndex(token: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const n = Number(token);
  return Number.isSafeInteger(n) ? n : undefined;
}

export function formatPointer(tokens: string[]): string {
  return tokens.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
