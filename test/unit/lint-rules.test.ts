// The ESLint rules of docs/architecture.md "Checked rules" run in `npm test`
// (`npm run lint`, eslint.config.js). This test pins that they bite: the
// repository's own config, rebased onto the fixture tree test/fixtures/lint/,
// reports every deliberately wrong line of the fake Raft core file and nothing
// in the clean files (a core file without violations, and a driver file where
// clocks, timers and I/O are allowed).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const fixture = join('test', 'fixtures', 'lint');

/** eslint.config.js with every pattern relative to the fixture tree and its type information from the fixture's tsconfig */
async function fixtureConfig(): Promise<Linter.Config[]> {
  const { default: config } = (await import(pathToFileURL(join(root, 'eslint.config.js')).href)) as { default: Linter.Config[] };
  return config.map((c) => {
    const parserOptions = c.languageOptions?.parserOptions as Record<string, unknown> | undefined;
    if (parserOptions?.project === undefined) return { ...c, basePath: fixture };
    return {
      ...c,
      basePath: fixture,
      languageOptions: { ...c.languageOptions, parserOptions: { ...parserOptions, project: './tsconfig.json', tsconfigRootDir: join(root, fixture) } },
    };
  });
}

describe('lint rules', () => {
  it('report the floating promise, the value import used as a type, and clocks, randomness, timers and I/O in the Raft core; nothing in clean files', async () => {
    const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: await fixtureConfig() });
    const results = await eslint.lintFiles([join(fixture, 'src')]);
    const found = results
      .flatMap((r) => r.messages.map((m) => `${r.filePath.slice(root.length + fixture.length + 2)}:${m.line} ${m.ruleId ?? m.message}`))
      .sort();
    expect(results.map((r) => r.filePath.slice(root.length + fixture.length + 2)).sort()).toEqual(['src/raft/progress.ts', 'src/raft/raft.ts', 'src/store/driver.ts']);
    expect(found).toEqual([
      'src/raft/raft.ts:10 no-restricted-syntax',
      'src/raft/raft.ts:11 no-restricted-globals',
      'src/raft/raft.ts:12 @typescript-eslint/no-floating-promises',
      'src/raft/raft.ts:3 no-restricted-imports',
      'src/raft/raft.ts:4 no-restricted-imports',
      'src/raft/raft.ts:5 no-restricted-imports',
      'src/raft/raft.ts:6 @typescript-eslint/consistent-type-imports',
      'src/raft/raft.ts:9 no-restricted-globals',
    ]);
  }, 60_000);
});
