// Static token file (spec 001 §5.3, `--token-auth-file`): CSV with at least
// three columns `token,user,uid`; the remaining columns are group names. As in
// Kubernetes, a quoted fourth column may hold several comma-separated groups
// (`"group1,group2"`). The file is read once: tokens live until restart.

import { readFileSync } from 'node:fs';
import type { UserInfo } from '../types.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

export class StaticTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'static-token';
  constructor(private readonly users: Map<string, UserInfo>) {}

  static fromFile(path: string): StaticTokenAuthenticator {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new Error(`--token-auth-file: cannot read ${path}: ${(e as Error).message}`);
    }
    return new StaticTokenAuthenticator(parseTokenFile(text, path));
  }

  authenticateToken(token: string): TokenResult {
    const u = this.users.get(token);
    if (!u) return { result: 'none' };
    return { result: 'ok', user: { ...u, groups: [...u.groups] } };
  }
}

/** parses the CSV; errors name the file and line */
export function parseTokenFile(text: string, name = 'token file'): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    let cols: string[];
    try {
      cols = parseCsvLine(line);
    } catch (e) {
      throw new Error(`--token-auth-file: ${name}:${i + 1}: ${(e as Error).message}`);
    }
    if (cols.length < 3) throw new Error(`--token-auth-file: ${name}:${i + 1}: expected at least 3 columns (token,user,uid), got ${cols.length}`);
    const [token, username, uid, ...rest] = cols.map((c) => c.trim()) as [string, string, string, ...string[]];
    if (token === '') throw new Error(`--token-auth-file: ${name}:${i + 1}: empty token`);
    if (username === '') throw new Error(`--token-auth-file: ${name}:${i + 1}: empty user name`);
    if (users.has(token)) throw new Error(`--token-auth-file: ${name}:${i + 1}: duplicate token`);
    const groups = rest.flatMap((c) => c.split(',')).map((g) => g.trim()).filter((g) => g !== '');
    users.set(token, { username, ...(uid !== '' ? { uid } : {}), groups });
  });
  return users;
}

/** RFC 4180 fields: quoted fields may hold commas and doubled quotes */
export function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error('unterminated quoted field');
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ',') throw new Error(`unexpected character after quoted field at column ${i + 1}`);
    } else {
      const next = line.indexOf(',', i);
      field = next < 0 ? line.slice(i) : line.slice(i, next);
      i = next < 0 ? line.length : next;
    }
    out.push(field);
    if (i >= line.length) return out;
    i++; // the comma
  }
}
