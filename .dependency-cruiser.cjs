// Import boundaries of src/ (docs/architecture.md "Folders and what they own"),
// checked by `npm test` (`npm run lint:deps`). Data flows one way — gateway →
// endpoints (filter chain, verb handlers) → auth/watch → registry → machinery, store → raft, with
// core below everything — and lower layers never import upper ones.
// Violations that predate the check are recorded in
// .dependency-cruiser-known-violations.json (regenerate with
// `npm run lint:deps:baseline` only when one is removed); any new one fails.

/**
 * what every layer may import: type-only contracts (identity, authorizer,
 * clock) and the lifecycle machines, which are pure rules over core
 */
const SHARED_CONTRACTS = '^src/(core/|lifecycles/|auth/types\\.ts$|auth/authz/types\\.ts$)';

/** a rule: files under `from` may import only files under `allowed` (plus their own folder and the contracts) */
function onlyDownward(name, from, allowed, comment) {
  const allowedPattern = [`^src/${from}/`, ...allowed.map((f) => `^src/${f}/`), SHARED_CONTRACTS].join('|');
  return {
    name,
    comment,
    severity: 'error',
    from: { path: `^src/${from}/` },
    to: { path: '^src/', pathNot: allowedPattern },
  };
}

module.exports = {
  forbidden: [
    onlyDownward('raft-imports-nothing', 'raft', [], 'src/raft/ is the replication library: it knows no store, registry or server (docs/raft.md)'),
    onlyDownward('store-imports-raft-only', 'store', ['raft'], 'the store hosts a state machine over a sequencer (local log or Raft)'),
    onlyDownward('core-imports-nothing', 'core', [], 'src/core/ holds contracts every layer may import'),
    {
      name: 'lifecycles-import-core-only',
      comment: 'src/lifecycles/ holds XState machines as pure rules: they import only src/core/ (and xstate), so any layer may use them',
      severity: 'error',
      from: { path: '^src/lifecycles/' },
      to: { path: '^src/', pathNot: '^src/(lifecycles|core)/' },
    },
    onlyDownward('machinery-imports-core-only', 'machinery', [], 'schema, patch, apply, selectors, protobuf: pure machinery that knows no registry (what it needs of a kind it declares structurally)'),
    onlyDownward('registry-imports-below', 'registry', ['machinery', 'store'], 'the registry sits on the machinery and the store; what it needs from above is injected'),
    onlyDownward(
      'endpoints-imports-below',
      'endpoints',
      ['registry', 'machinery', 'store', 'watch', 'auth', 'audit'],
      'the filter chain and the verb handlers serve requests through the registry and open watches on the cacher; transport-free (the gateway imports them)',
    ),
    onlyDownward('watch-imports-below', 'watch', ['registry', 'machinery', 'store'], 'watch caches sit on the registry and the store (the watch endpoint is in src/endpoints/)'),
    onlyDownward('auth-imports-below', 'auth', ['registry', 'machinery'], 'authenticators, authorizers and the review kinds use the registry (objects, errors, the capability interfaces of src/registry/capabilities.ts); the endpoint layer decodes bodies for them'),
    onlyDownward('controllers-import-below', 'controllers', ['registry', 'machinery', 'store', 'auth'], 'controllers act through the registry'),
    {
      name: 'controllers-use-the-runtime',
      comment:
        'controllers read through the informers of src/controllers/runtime/ (docs/controllers.md); only the runtime touches the store (the garbage collector included: its graph is fed by an informer per kind)',
      severity: 'error',
      from: { path: '^src/controllers/', pathNot: '^src/controllers/runtime/' },
      to: { path: '^src/store/' },
    },
    onlyDownward('audit-imports-auth', 'audit', ['auth'], 'the audit recorder knows identities and the webhook client of authentication'),
    onlyDownward('gateway-imports-below', 'gateway', ['endpoints', 'auth', 'audit', 'registry', 'machinery', 'watch'], 'the transport (TLS front, uWS, streams, health) hands requests to the endpoint chain'),
    // The node agent's one edge into src/ is SHARED_CONTRACTS: src/core/ and
    // src/lifecycles/ (its node-condition and watchdog machines live there with
    // the other lifecycles). Both are pure, below every layer, and import no
    // control-plane code (lifecycles-import-core-only), so the agent still ships
    // and runs without the control plane.
    onlyDownward(
      'nodeagent-is-separate',
      'nodeagent',
      [],
      'the node agent talks to the control plane only through the public API and to the runtime only through gRPC; it may import the pure src/core/ and src/lifecycles/ (its condition and watchdog machines)',
    ),
    {
      name: 'raft-core-is-pure',
      comment: 'the Raft core does no I/O (test/unit/raft-core-purity.test.ts checks clocks and randomness)',
      severity: 'error',
      from: { path: '^src/raft/(raft|state|election|replication|leader|read-index|follower|membership|raw-node|progress|quorum|read-only|log|types)\\.ts$' },
      to: { dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'no-circular',
      comment: 'import circles (type-level ones too) tie modules into one unit',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-test',
      comment: 'production code never imports test code',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // type-only imports count: a type-level circle is still a circle
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
