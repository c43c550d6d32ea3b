// A service-account signing key for a test file: generated in a temporary directory before its tests, removed after.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type ServiceAccountKeys, loadServiceAccountKeys } from '../../src/auth/authn/sa-keys.js';

/** registers the hooks; the returned function gives the keys once the file's tests run */
export function tempServiceAccountKeys(prefix: string): () => ServiceAccountKeys {
  let dir = '';
  let keys: ServiceAccountKeys | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    keys = loadServiceAccountKeys({ defaultKeyPath: join(dir, 'sa.key') });
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!keys) throw new Error('service-account keys are made in beforeAll');
    return keys;
  };
}
