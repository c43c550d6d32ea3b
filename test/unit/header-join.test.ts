// Repeated request headers as the handlers see them: joined with ", ", except
// the impersonation headers, whose field lines stay apart (kube reads each as one value).

import { describe, expect, it } from 'vitest';
import { FIELD_LINE_SEPARATOR, h2HeaderValue, joinHeaderLine } from '../../src/core/header-join.js';

describe('joinHeaderLine', () => {
  it('joins ordinary headers with ", " and impersonation groups and extras with the line separator', () => {
    expect(joinHeaderLine('accept', 'a', 'b')).toBe('a, b');
    expect(joinHeaderLine('impersonate-group', undefined, ',,,x')).toBe(',,,x');
    expect(joinHeaderLine('impersonate-group', 'a,b', 'c')).toBe(`a,b${FIELD_LINE_SEPARATOR}c`);
    expect(joinHeaderLine('impersonate-extra-scopes', 'r', 'w')).toBe(`r${FIELD_LINE_SEPARATOR}w`);
  });
});

describe('h2HeaderValue', () => {
  it('reads impersonation lines again from the raw list, where Node has joined them with ", "', () => {
    const raw = [':method', 'GET', 'impersonate-group', 'a, b', 'Impersonate-Group', 'c'];
    expect(h2HeaderValue('impersonate-group', 'a, b, c', raw)).toBe(`a, b${FIELD_LINE_SEPARATOR}c`);
    expect(h2HeaderValue('accept', ['x', 'y'], raw)).toBe('x, y');
    expect(h2HeaderValue('impersonate-group', 'a', undefined)).toBe('a');
  });
});
