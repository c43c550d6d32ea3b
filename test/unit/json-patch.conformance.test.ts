// Every record of the public JSON Patch suite (shared/conformance/json-patch, beside the clone):
// `expected` must be produced exactly, `error` must throw, `disabled` is skipped.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PatchError } from '../../src/machinery/patch/errors.js';
import { applyJsonPatch } from '../../src/machinery/patch/json-patch.js';
import type { JSONValue } from '../../src/registry/types.js';
import { conformancePath } from '../helpers/shared-dir.js';

const DIR = conformancePath('json-patch');

interface Rec {
  comment?: string;
  doc?: JSONValue;
  patch?: JSONValue;
  expected?: JSONValue;
  error?: string;
  disabled?: boolean;
}

const executed: Record<string, number> = {};

function load(file: string): Rec[] {
  return JSON.parse(readFileSync(`${DIR}/${file}`, 'utf8')) as Rec[];
}

/** records that are tests: have a doc and a patch and are not disabled */
function runnable(recs: Rec[]): Rec[] {
  return recs.filter((r) => r.doc !== undefined && r.patch !== undefined && r.disabled !== true);
}

for (const file of ['tests.json', 'spec_tests.json']) {
  const recs = load(file);
  describe(file, () => {
    runnable(recs).forEach((r, i) => {
      const name = `#${i} ${r.comment ?? JSON.stringify(r.patch).slice(0, 80)}`;
      it(name, () => {
        executed[file] = (executed[file] ?? 0) + 1;
        const docBefore = JSON.stringify(r.doc);
        if (r.error !== undefined) {
          expect(() => applyJsonPatch(r.doc!, r.patch!)).toThrow(PatchError);
        } else if (r.expected !== undefined) {
          expect(applyJsonPatch(r.doc!, r.patch!)).toStrictEqual(r.expected);
        } else {
          // neither expected nor error: the patch must simply apply
          expect(() => applyJsonPatch(r.doc!, r.patch!)).not.toThrow();
        }
        // pure function: the input document is untouched
        expect(JSON.stringify(r.doc)).toBe(docBefore);
      });
    });
  });
}

describe('conformance coverage', () => {
  it('executed every runnable record of both files', () => {
    // counts computed independently of the loop above, from the raw files
    const tests = load('tests.json');
    const spec = load('spec_tests.json');
    const count = (recs: Rec[]) =>
      recs.filter((r) => 'doc' in r && 'patch' in r && !r.disabled).length;
    // the suite as shipped: 95 records (3 disabled) and 17 records (1 disabled)
    expect(count(tests)).toBe(92);
    expect(count(spec)).toBe(16);
    expect(executed['tests.json']).toBe(count(tests));
    expect(executed['spec_tests.json']).toBe(count(spec));
  });

  it('failed tests are TestFailed, invalid patches are Invalid', () => {
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as PatchError;
      }
      throw new Error('did not throw');
    };
    const t = err(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]));
    expect(t.reason).toBe('TestFailed');
    expect(t.message).toContain('operation 0');
    expect(t.message).toContain('/a');
    const inv = err(() =>
      applyJsonPatch({ a: 1 }, [
        { op: 'add', path: '/b', value: 1 },
        { op: 'remove', path: '/zz' },
      ]),
    );
    expect(inv.reason).toBe('Invalid');
    expect(inv.message).toContain('operation 1');
    expect(inv.message).toContain('/zz');
  });
});
