// The error text Go's encoding/json gives for input JSON.parse refused, for the
// common shapes: kube's messages quote it (an undecodable request body, a
// docker config Secret whose data is not JSON).

const VALUE_START = /[{["\-0-9tfn]/;
const LITERALS: Record<string, string> = { t: 'true', f: 'false', n: 'null' };

/** a misspelt literal as Go's scanner reports it: "invalid character 'o' in literal null (expecting 'u')" */
function literalError(text: string): string | undefined {
  const literal = LITERALS[text[0]!];
  if (!literal) return undefined;
  for (let i = 1; i < literal.length; i++) {
    const c = text[i];
    if (c === undefined) return 'unexpected end of JSON input';
    if (c !== literal[i]) return `invalid character '${c}' in literal ${literal} (expecting '${literal[i]}')`;
  }
  return undefined;
}

/** the error Go's encoding/json gives for `text`, which JSON.parse refused with `jsError` */
export function goJsonError(text: string, jsError: string): string {
  const trimmed = text.trimStart();
  if (trimmed === '' || /end of JSON input/.test(jsError)) return 'unexpected end of JSON input';
  const first = trimmed[0]!;
  if (!VALUE_START.test(first)) return `invalid character '${first}' looking for beginning of value`;
  const literal = literalError(trimmed);
  if (literal) return literal;
  const at = /position (\d+)/.exec(jsError);
  const c = at ? text[Number(at[1])] : undefined;
  if (c === undefined) return 'unexpected end of JSON input';
  if (/after JSON/.test(jsError)) return `invalid character '${c}' after top-level value`;
  return `invalid character '${c}' looking for beginning of value`;
}
