// ESLint rules checked in `npm test` (`npm run lint`); docs/architecture.md "Checked rules".
// test/unit/lint-rules.test.ts lints deliberately wrong files in test/fixtures/lint/ with this
// config so the rules cannot silently stop biting.
import { builtinModules } from 'node:module';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The pure Raft core (docs/raft.md "Shape"): no clock, no ambient randomness, no I/O. */
export const RAFT_CORE = ['src/raft/{raft,state,election,replication,leader,read-index,follower,membership,raw-node,progress,quorum,read-only,log,types}.ts'];

const PURE = 'the Raft core is pure (docs/raft.md "Shape"): time arrives as tick() calls, randomness through an injected source, I/O in the driver';

export default defineConfig(
  globalIgnores(['dist/', 'test/fixtures/']),
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // a type-only import is erased: say so, so that a value import is a real run-time edge
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Type-aware rules on src/ only, with the program of tsconfig.build.json (src/ alone): building the
    // TypeScript program is most of lint's time, and the whole-repository one costs about twice as much.
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.build.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      // a promise nobody awaits loses its rejection; fire-and-forget is written `void p` with a reason
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    files: RAFT_CORE,
    rules: {
      'no-restricted-globals': [
        'error',
        ...['Date', 'performance', 'process', 'setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask'].map((name) => ({
          name,
          message: PURE,
        })),
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='Math'][property.name='random']", message: PURE },
        { selector: 'ImportExpression', message: PURE },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules.map((name) => ({ name, message: PURE })),
          patterns: [{ regex: '^(node:|level$|level/|@grpc/)', message: PURE }],
        },
      ],
    },
  },
);
