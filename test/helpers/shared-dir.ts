// The shared/ folder (specification and conformance data) sits beside the
// repository clone, locally and in CI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export function sharedDir(): string {
  const beside = fileURLToPath(new URL('../../../shared', import.meta.url));
  if (existsSync(beside)) return beside;
  if (process.env.ORCH_SHARED_DIR) return process.env.ORCH_SHARED_DIR;
  return '/work/shared';
}

export function conformancePath(...parts: string[]): string {
  return join(sharedDir(), 'conformance', ...parts);
}
