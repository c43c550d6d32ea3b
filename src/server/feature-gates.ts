// Feature gates (spec 000 §3.3): named switches an operator sets with
// `--feature-gates=Name=true,Other=false`. Each gate has a stage that fixes
// its default and whether it can still be changed:
//   Alpha       disabled by default; the operator may enable it
//   Beta        enabled by default; the operator may disable it
//   GA          deprecated and non-operational: always on, disabling it fails
//   (removed)   not in the table any more: naming it fails like any unknown gate

export type GateStage = 'Alpha' | 'Beta' | 'GA';

export interface GateSpec {
  stage: GateStage;
  description: string;
}

/** every gate this server knows (the table is the single source of truth) */
export const KNOWN_GATES: Readonly<Record<string, GateSpec>> = {
  // spec 000 §4.10: force deletion of corrupt objects (alpha, default off)
  AllowUnsafeMalformedObjectDeletion: {
    stage: 'Alpha',
    description: 'allow the delete option ignoreStoreReadErrorWithClusterBreakingPotential to remove objects whose stored data cannot be read',
  },
  // spec 001 §5.15: the Node authorizer lets an agent read only its own Node and its pods (beta, default on)
  AuthorizeNodeWithSelectors: {
    stage: 'Beta',
    description: 'the Node authorizer allows a node to get only its own Node, list/watch nodes only with metadata.name=<own> and pods only with spec.nodeName=<own>',
  },
};

export type GateName = keyof typeof KNOWN_GATES & string;

export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}

function defaultOf(spec: GateSpec): boolean {
  return spec.stage !== 'Alpha';
}

/** The resolved gate values of one server. */
export class FeatureGates {
  private readonly values = new Map<string, boolean>();

  /** throws FeatureGateError for an unknown gate or for disabling a GA gate */
  constructor(
    overrides: Record<string, boolean> = {},
    private readonly table: Readonly<Record<string, GateSpec>> = KNOWN_GATES,
  ) {
    for (const [name, spec] of Object.entries(table)) this.values.set(name, defaultOf(spec));
    for (const [name, value] of Object.entries(overrides)) {
      const spec = table[name];
      if (!spec) {
        throw new FeatureGateError(`unrecognized feature gate: ${name} (known gates: ${Object.keys(table).sort().join(', ')})`);
      }
      if (spec.stage === 'GA' && value === false) {
        throw new FeatureGateError(`cannot set feature gate ${name} to false: the feature is GA and the gate is non-operational`);
      }
      this.values.set(name, value);
    }
  }

  enabled(name: string): boolean {
    return this.values.get(name) ?? false;
  }

  /** name → value for every known gate (for logs and docs) */
  all(): Record<string, boolean> {
    return Object.fromEntries(this.values);
  }

  stageOf(name: string): GateStage | undefined {
    return this.table[name]?.stage;
  }
}

/** parses the flag value `A=true,B=false` (whitespace allowed around items) */
export function parseFeatureGates(flag: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const raw of flag.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new FeatureGateError(`missing bool value for feature gate "${item}" (expected Name=true or Name=false)`);
    const name = item.slice(0, eq).trim();
    const v = item.slice(eq + 1).trim().toLowerCase();
    if (v !== 'true' && v !== 'false') throw new FeatureGateError(`invalid value of ${name}=${item.slice(eq + 1)}: must be true or false`);
    out[name] = v === 'true';
  }
  return out;
}
