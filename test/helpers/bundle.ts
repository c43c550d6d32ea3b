// One esbuild bundle of `orch` (src/cli/main.ts) for tests that start many
// server processes (the chaos run): a process started through `tsx` spends
// seconds of CPU importing and transforming the source tree (2.5 s of CPU,
// 5 s and more on a loaded machine); the bundle imports in about 1 s of CPU.
// Packages stay external and are found through a node_modules link beside
// the bundle; `import.meta.url` in each module is replaced by that module's
// own file URL, so files found relative to a module (the gRPC .proto files)
// are found as when running from source.

import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** builds the bundle in `dir` and returns its path */
export async function bundleOrch(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const outfile = join(dir, 'orch.mjs');
  await build({
    entryPoints: [join(REPO, 'src/cli/main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'silent',
    plugins: [
      {
        name: 'own-import-meta-url',
        setup(b) {
          b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (a) => ({
            contents: (await readFile(a.path, 'utf8')).replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href)),
            loader: 'ts',
          }));
        },
      },
    ],
  });
  return outfile;
}
