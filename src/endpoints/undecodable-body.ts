// kube's 400 for a request body its JSON decoder cannot even read the kind
// from (transformDecodeError without a kind): "the object provided is
// unrecognized (must be of type Namespace): couldn't get version/kind; json
// parse error: <Go's encoding/json error> (<the first 30 bytes>)". kubectl
// `create --raw -f manifest.yaml` sends YAML this way.

import { goJsonError } from '../machinery/go-json-error.js';

const MAX_SUMMARY = 30;

/** the first bytes of the body as kube's summarizeData shows them: text for a JSON object, hex otherwise */
function summarize(body: Uint8Array): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, MAX_SUMMARY);
  const more = body.length > MAX_SUMMARY ? ' ...' : '';
  if (body[0] === 0x7b) return `${new TextDecoder().decode(head)}${more}`;
  return `${Buffer.from(head).toString('hex')}${more}`;
}

export function undecodableBodyMessage(kind: string, body: Uint8Array, text: string, jsError: string): string {
  return `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${goJsonError(text, jsError)} (${summarize(body)})`;
}
