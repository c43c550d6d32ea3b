import { describe, expect, it } from 'vitest';
import { undecodableBodyMessage } from '../../src/endpoints/undecodable-body.js';
import { goJsonError } from '../../src/machinery/go-json-error.js';

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

describe('goJsonError (Go encoding/json messages)', () => {
  const goError = (text: string): string => {
    try {
      JSON.parse(text);
      return '';
    } catch (e) {
      return goJsonError(text, (e as Error).message);
    }
  };
  it('a misspelt literal names the character and what was expected', () => {
    expect(goError('notjson\n')).toBe("invalid character 'o' in literal null (expecting 'u')");
    expect(goError('tru')).toBe('unexpected end of JSON input');
    expect(goError('fals3')).toBe("invalid character '3' in literal false (expecting 'e')");
  });
});
