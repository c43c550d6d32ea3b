// Warning headers as kube's warning recorder writes them (apimachinery's
// NewWarningHeader; spec 000 §4.8): quoted, escaped, a text with control
// characters dropped, and a UTF-8 text spelt as its bytes (header values are
// byte strings on every path to the wire).
import { describe, expect, it } from 'vitest';
import { pushWarnings } from '../../src/endpoints/encode.js';

const warnings = (...texts: string[]) => {
  const headers: [string, string][] = [];
  pushWarnings(headers, texts);
  return headers;
};

describe('Warning headers', () => {
  it('quotes the text and escapes quotes and backslashes', () => {
    expect(warnings('unknown field "a\\b"')).toEqual([['Warning', '299 - "unknown field \\"a\\\\b\\""']]);
  });

  it('spells a non-ASCII text as its UTF-8 bytes, one char per byte', () => {
    const [[, value]] = warnings('unknown field "don’t 日本"') as [[string, string]];
    expect(Buffer.from(value, 'latin1').toString('utf8')).toBe('299 - "unknown field \\"don’t 日本\\""');
    // every char is one byte, none a control character: nothing is cut to one on the wire
    expect([...value].every((c) => c.charCodeAt(0) <= 0xff)).toBe(true);
    expect(/[\u0000-\u001f\u007f]/.test(value)).toBe(false);
  });

  it('drops a text holding control characters, as kube does', () => {
    expect(warnings('line one\nline two', 'tab\there', 'bell\u0007', 'fine')).toEqual([['Warning', '299 - "fine"']]);
  });
});
