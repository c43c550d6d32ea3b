// /version's build fields (src/server/version.ts): never empty where kube's are never empty.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitCommitOf, versionInfo } from '../../src/server/version.js';

describe('/version', () => {
  it('buildDate is an RFC 3339 UTC time in seconds, and gitCommit the checkout HEAD', () => {
    const v = versionInfo();
    expect(v.buildDate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Date.parse(v.buildDate!)).toBeLessThanOrEqual(Date.now());
    // the checkout the tests run from ('' when they run outside one)
    let head = '';
    try {
      head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      // not a git checkout
    }
    expect(v.gitCommit).toBe(head);
  });

  it('reads a ref from packed-refs, a detached HEAD, and nothing outside a checkout', () => {
    const root = mkdtempSync(join(tmpdir(), 'orch-git-'));
    const sha = 'a'.repeat(40);
    mkdirSync(join(root, '.git'));
    mkdirSync(join(root, 'src', 'server'), { recursive: true });
    writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(root, '.git', 'packed-refs'), `# pack-refs with: peeled\n${'b'.repeat(40)} refs/heads/other\n${sha} refs/heads/main\n`);
    expect(gitCommitOf(join(root, 'src', 'server'))).toBe(sha);
    writeFileSync(join(root, '.git', 'HEAD'), `${'c'.repeat(40)}\n`);
    expect(gitCommitOf(join(root, 'src'))).toBe('c'.repeat(40));
    expect(gitCommitOf(mkdtempSync(join(tmpdir(), 'orch-nogit-')))).toBe('');
  });
});
