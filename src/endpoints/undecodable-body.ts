// kube's 400 for a request body its JSON decoder cannot even read the kind
// from (transformDecodeError without a kind): "the object provided is
// unrecognized (must be of type Namespace): couldn't get version/kind; json
// parse error: <Go's encoding/json error> (<the first 30 bytes>)". kubectl
// `create --raw -f manifest.yaml` sends YAML this way.

const MAX_SUMMARY = 30;

/** the first bytes of the body as kube's summarizeData shows them: text for a JSON object, hex otherwise */
function summarize(body: Uint8Array): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, MAX_SUMMARY);
  const more = body.length > MAX_SUMMARY ? ' ...' : '';
  if (body[0] === 0x7b) return `${new TextDecoder().decode(head)}${more}`;
  return `${Buffer.from(head).toString('hex')}${more}`;
}

const VALUE_START = /[{["\-0-9tfn]/;

/** the error Go's encoding/json gives for the text JSON.parse refused (the common shapes) */
function goJsonError(text: string, jsError: string): string {
  const trimmed = text.trimStart();
  if (trimmed === '' || /end of JSON input/.test(jsError)) return 'unexpected end of JSON input';
  const first = trimmed[0]!;
  if (!VALUE_START.test(first)) return `invalid character '${first}' looking for beginning of value`;
  const at = /position (\d+)/.exec(jsError);
  const c = at ? text[Number(at[1])] : undefined;
  if (c === undefined) return 'unexpected end of JSON input';
  if (/after JSON/.test(jsError)) return `invalid character '${c}' after top-level value`;
  return `invalid character '${c}' looking for beginning of value`;
}

export function undecodableBodyMessage(kind: string, body: Uint8Array, text: string, jsError: string): string {
  return `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${goJsonError(text, jsError)} (${summarize(body)})`;
}
