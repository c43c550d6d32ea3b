// Label selector parse errors (src/machinery/selectors/labels.ts) in kube's
// words (apimachinery labels/selector.go): a token is named by its literal, ''
// at the end of the string; errors between requirements are the selector's
// own, without "unable to parse requirement".
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../../src/machinery/selectors/labels.js';

const error = (s: string): string => {
  try {
    parseLabelSelector(s);
  } catch (e) {
    return (e as Error).message;
  }
  return 'parsed';
};

describe('label selector errors', () => {
  it.each([
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (b cd)', "unable to parse requirement: found 'cd', expected: ',' or ')'"],
    ['a in b', "unable to parse requirement: found 'b', expected: '('"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['a=b,', "found '', expected: identifier after ','"],
    ['a,,b', "found ',', expected: identifier after ','"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
  ])('%s', (selector, message) => {
    expect(error(selector)).toBe(message);
  });

  it('still parses what kube parses', () => {
    expect(parseLabelSelector('!a, b notin (x,y) ,c!=d')).toEqual([
      { key: 'a', op: '!', values: [] },
      { key: 'b', op: 'notin', values: ['x', 'y'] },
      { key: 'c', op: '!=', values: ['d'] },
    ]);
  });
});
