// Feature gates (spec 000 §3.3): stages, defaults, unknown gates, GA gates.

import { describe, expect, it } from 'vitest';
import { FeatureGateError, FeatureGates, KNOWN_GATES, parseFeatureGates } from '../../src/server/feature-gates.js';

describe('feature gates', () => {
  it('AllowUnsafeMalformedObjectDeletion is alpha and off by default (spec 000 §4.10)', () => {
    expect(KNOWN_GATES.AllowUnsafeMalformedObjectDeletion?.stage).toBe('Alpha');
    expect(new FeatureGates().enabled('AllowUnsafeMalformedObjectDeletion')).toBe(false);
    expect(new FeatureGates({ AllowUnsafeMalformedObjectDeletion: true }).enabled('AllowUnsafeMalformedObjectDeletion')).toBe(true);
  });

  it('follows the §3.3 stages: beta on by default, GA cannot be disabled, unknown is refused', () => {
    const table = {
      A: { stage: 'Alpha' as const, description: '' },
      B: { stage: 'Beta' as const, description: '' },
      G: { stage: 'GA' as const, description: '' },
    };
    const g = new FeatureGates({}, table);
    expect(g.all()).toEqual({ A: false, B: true, G: true });
    expect(new FeatureGates({ B: false }, table).enabled('B')).toBe(false);
    expect(() => new FeatureGates({ G: false }, table)).toThrow(FeatureGateError);
    expect(new FeatureGates({ G: true }, table).enabled('G')).toBe(true);
    expect(() => new FeatureGates({ Removed: true }, table)).toThrow(/unrecognized feature gate: Removed/);
  });

  it('parses the flag form', () => {
    expect(parseFeatureGates('A=true, B=false,')).toEqual({ A: true, B: false });
    expect(() => parseFeatureGates('A')).toThrow(FeatureGateError);
    expect(() => parseFeatureGates('A=yes')).toThrow(/must be true or false/);
  });
});
