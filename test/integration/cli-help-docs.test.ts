// The documented command lines against the commands' own `--help`: every flag that README.md, docs/*.md (shell
// blocks), the systemd units' ExecStart and the Containerfile's ENTRYPOINT give an `orch` subcommand exists in
// that subcommand's `--help`; every flag of `orch server --help` is described somewhere in README.md or docs/;
// the README's "Server flags" section names only flags the server has, with the defaults it prints;
// docs/nodeagent.md's flag table is exactly
// `orch nodeagent --help`.
import { readFile, readdir } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnOrch } from '../helpers/orch-process.js';

const REPO = new URL('../../', import.meta.url).pathname;
const SUBCOMMANDS = ['server', 'nodeagent', 'node-kubeconfig', 'bootstrap-kubeconfig', 'runtime-sim'] as const;
const help: Record<string, Set<string>> = {};
let serverHelpText = '';
let docs: Record<string, string> = {};

/** the long flags a `--help` lists (its option column) */
function helpFlags(text: string): Set<string> {
  return new Set([...text.matchAll(/^ {2}(?:-\w, )?(--[a-z0-9-]+)/gm)].map((m) => m[1]!));
}

/** a doc's shell command lines (fenced sh blocks; `\` continuations joined; comments dropped) */
function shellLines(md: string): string[] {
  const blocks = [...md.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  return blocks.flatMap((b) => b.replace(/\\\n/g, ' ').split('\n')).map((l) => l.replace(/(^|\s)#.*$/, ''));
}

/** [subcommand, flags] of every orch invocation in a line: `orch <sub>`, `node …/main.js <sub>`, `npm start -- …` */
function invocations(line: string): [string, string[]][] {
  const out: [string, string[]][] = [];
  for (const m of line.matchAll(/(?:(?:^|\s)orch|main\.js)\s+([a-z-]+)([^|;&]*)|npm start -- ([^|;&]*)/g)) {
    const sub = m[3] !== undefined ? 'server' : m[1]!;
    const rest = m[3] ?? m[2]!;
    out.push([sub, [...rest.matchAll(/(?:^|\s)(--[a-z0-9-]+)/g)].map((f) => f[1]!)]);
  }
  return out;
}

beforeAll(async () => {
  await Promise.all(SUBCOMMANDS.map(async (sub) => {
    const p = spawnOrch([sub, '--help']);
    expect(await p.exited, p.output()).toBe(0);
    help[sub] = helpFlags(p.output());
    if (sub === 'server') serverHelpText = p.output();
  }));
  const names = ['README.md', ...(await readdir(`${REPO}docs`)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  docs = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await readFile(`${REPO}${n}`, 'utf8')] as const)));
}, 60_000);

describe('documented orch command lines', () => {
  it('every flag a documented command line gives an orch subcommand is in its --help', async () => {
    const lines: [string, string][] = Object.entries(docs).flatMap(([n, md]) => shellLines(md).map((l) => [n, l] as [string, string]));
    for (const unit of ['deploy/orch.service', 'deploy/nodeagent.service']) {
      const text = (await readFile(`${REPO}${unit}`, 'utf8')).replace(/\\\n/g, ' ');
      lines.push([unit, /^ExecStart=(.*)$/m.exec(text)![1]!]);
    }
    const entrypoint = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(await readFile(`${REPO}deploy/Containerfile`, 'utf8'))![1]!) as string[];
    lines.push(['deploy/Containerfile', entrypoint.join(' ')]);

    const checked: string[] = [];
    const unknown: string[] = [];
    for (const [file, line] of lines) {
      for (const [sub, flags] of invocations(line)) {
        expect(SUBCOMMANDS, `${file}: orch ${sub}`).toContain(sub);
        for (const f of flags) (help[sub]!.has(f) ? checked : unknown).push(`${file}: orch ${sub} ${f}`);
      }
    }
    expect(unknown).toEqual([]);
    // the quick start, the node agent, TLS bootstrap, the auth examples and the units were all seen
    for (const f of ['README.md: orch node-kubeconfig --node-name', 'README.md: orch bootstrap-kubeconfig --ttl', 'docs/nodeagent.md: orch server --enable-bootstrap-token-auth',
      'docs/authentication.md: orch server --client-ca-file', 'deploy/nodeagent.service: orch nodeagent --config-dir', 'deploy/orch.service: orch server --initial-cluster',
      'deploy/Containerfile: orch server --data-dir']) expect(checked).toContain(f);
  });

  it('the README\'s "Server flags" section names only flags `orch server --help` lists (`--x-*`: some flag with that prefix)', () => {
    const section = /^## Server flags\n([\s\S]*?)^## /m.exec(docs['README.md']!)![1]!;
    const named = new Set([...section.matchAll(/`(--[a-z0-9-]+\*?)/g)].map((m) => m[1]!));
    expect(named.size).toBeGreaterThan(30);
    const server = [...help.server!];
    const missing = [...named].filter((f) => (f.endsWith('*') ? !server.some((s) => s.startsWith(f.slice(0, -1))) : !help.server!.has(f)));
    expect(missing).toEqual([]);
  });

  it('the defaults in the README\'s flag table are the ones `orch server --help` prints', () => {
    const section = /^## Server flags\n([\s\S]*?)^## /m.exec(docs['README.md']!)![1]!;
    const rows = [...section.matchAll(/^\| `(--[a-z0-9-]+)` \| `([^`]*)` \|/gm)].filter((m) => m[1] !== '--controllers');
    expect(rows.length).toBeGreaterThan(10);
    for (const [, flag, readmeDefault] of rows) {
      const printed = new RegExp(`^ +${flag}\\b.*\\(default:? "?([^")]*)"?\\)$`, 'm').exec(serverHelpText)?.[1];
      expect(printed, flag).toBe(readmeDefault);
    }
  });

  it('every flag of `orch server --help` is described in README.md or docs/', () => {
    const all = Object.values(docs).join('\n');
    const undocumented = [...help.server!].filter((f) => f !== '--help' && !new RegExp(`${f}(?![a-z0-9-])`).test(all));
    expect(undocumented).toEqual([]);
  });

  it('docs/nodeagent.md\'s flag table is `orch nodeagent --help`', () => {
    const table = /^## Flags\n([\s\S]*?)^## /m.exec(docs['docs/nodeagent.md']!)![1]!;
    const rows = [...table.matchAll(/^\| `(--[a-z0-9-]+)` \|/gm)].map((m) => m[1]!);
    expect(rows.sort()).toEqual([...help.nodeagent!].filter((f) => f !== '--help').sort());
  });
});
