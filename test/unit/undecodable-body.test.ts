import { describe, expect, it } from 'vitest';
import { undecodableBodyMessage } from '../../src/endpoints/undecodable-body.js';

const msg = (text: string) => {
  let err = '';
  try {
    JSON.parse(text);
  } catch (e) {
    err = (e as Error).message;
  }
  return undecodableBodyMessage('Namespace', new TextEncoder().encode(text), text, err);
};

describe('undecodableBodyMessage (kube transformDecodeError without a kind)', () => {
  it('YAML sent as JSON: Go json error and the first 30 bytes in hex', () => {
    expect(msg('apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n')).toBe(
      "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value (61706956657273696f6e3a2076310a6b696e643a20506f640a6d65746164 ...)",
    );
  });

  it('a broken JSON object shows its text; truncated input is end of input', () => {
    expect(msg('{"kind": ')).toBe(
      "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"kind\": )",
    );
    expect(msg('{} x')).toContain("json parse error: invalid character 'x' after top-level value ({} x)");
  });
});
