// A `Command` written as msgpack by hand, into a buffer the caller sizes
// (`commandSize`): the single-node log builds each group record in one
// buffer, every entry encoded in place (src/store/command-log.ts), instead of
// msgpackr encoding each command into its shared buffer and the group copying
// it out again. The bytes are exactly those msgpackr gives for the command's
// own copy (`ownCopy`: fields in that order, objects as map16 as msgpackr
// writes them with `useRecords: false`), so the log format does not change
// and `decodeCommand` reads them (test/unit/command-writer.test.ts checks
// byte equality against msgpackr). The snapshot encoder writes the state's
// keys and change records with the same primitives (snapshot-encoder.ts).

import type { Command, Compare, Op } from './types.js';

/** the encoded size of `cmd` (writeCommand writes exactly this many bytes) */
export function commandSize(cmd: Command): number {
  if (cmd.type === 'compact') {
    return 3 + strSize('type') + strSize('compact') + strSize('revision') + numSize(cmd.revision) + strSize('time') + numSize(cmd.time);
  }
  const t = cmd.txn;
  let n = 3 + strSize('type') + strSize('txn') + strSize('time') + numSize(cmd.time) + strSize('txn') + 3;
  n += strSize('compare') + arrayHeaderSize(t.compare.length);
  for (const c of t.compare) n += 3 + KEY + strSize(c.key) + TARGET + strSize(c.target) + OP + strSize(c.op) + VALUE + numSize(c.value);
  n += strSize('success') + opsSize(t.success) + strSize('failure') + opsSize(t.failure);
  return n;
}

/** writes `cmd` at `at`; returns the offset after it */
export function writeCommand(cmd: Command, out: Uint8Array, view: DataView, at: number): number {
  // { type, revision, time } or { type, time, txn }: ownCopy's field order
  let p = writeStr(out, map16(out, at, 3), 'type');
  if (cmd.type === 'compact') {
    p = numField(out, view, writeStr(out, p, 'compact'), 'revision', cmd.revision);
    return numField(out, view, p, 'time', cmd.time);
  }
  const t = cmd.txn;
  p = numField(out, view, writeStr(out, p, 'txn'), 'time', cmd.time);
  p = writeStr(out, p, 'txn');
  p = map16(out, p, 3);
  p = writeStr(out, p, 'compare');
  p = arrayHeader(out, view, p, t.compare.length);
  for (const c of t.compare) p = writeCompare(out, view, p, c);
  p = writeStr(out, p, 'success');
  p = writeOps(out, view, p, t.success);
  p = writeStr(out, p, 'failure');
  return writeOps(out, view, p, t.failure);
}

const KEY = strSize('key');
const TARGET = strSize('target');
const OP = strSize('op');
const VALUE = strSize('value');
const TYPE = strSize('type');

function opsSize(ops: readonly Op[]): number {
  let n = arrayHeaderSize(ops.length);
  for (const op of ops) {
    n += 3 + TYPE + strSize(op.type) + KEY + strSize(op.key);
    if (op.type === 'put') n += VALUE + binSize(op.value.byteLength);
  }
  return n;
}

function numField(out: Uint8Array, view: DataView, at: number, name: string, v: number): number {
  return writeNum(out, view, writeStr(out, at, name), v);
}

function writeCompare(out: Uint8Array, view: DataView, at: number, c: Compare): number {
  let p = map16(out, at, 4);
  p = writeStr(out, p, 'key');
  p = writeStr(out, p, c.key);
  p = writeStr(out, p, 'target');
  p = writeStr(out, p, c.target);
  p = writeStr(out, p, 'op');
  p = writeStr(out, p, c.op);
  return numField(out, view, p, 'value', c.value);
}

function writeOps(out: Uint8Array, view: DataView, at: number, ops: readonly Op[]): number {
  let p = arrayHeader(out, view, at, ops.length);
  for (const op of ops) {
    p = map16(out, p, op.type === 'put' ? 3 : 2);
    p = writeStr(out, p, 'type');
    p = writeStr(out, p, op.type);
    p = writeStr(out, p, 'key');
    p = writeStr(out, p, op.key);
    if (op.type === 'put') {
      p = writeStr(out, p, 'value');
      p = writeBin(out, view, p, op.value);
    }
  }
  return p;
}

// ---- msgpack primitives, as msgpackr writes them ----

/** a type byte and a 16-bit big-endian length or value */
function tagged16(out: Uint8Array, at: number, tag: number, n: number): number {
  out[at] = tag;
  out[at + 1] = n >> 8;
  out[at + 2] = n & 0xff;
  return at + 3;
}

/** a type byte and a 32-bit big-endian length or value */
function tagged32(out: Uint8Array, view: DataView, at: number, tag: number, n: number): number {
  out[at] = tag;
  view.setUint32(at + 1, n);
  return at + 5;
}

/** msgpackr writes every plain object as map16, the size filled in afterwards */
function map16(out: Uint8Array, at: number, size: number): number {
  return tagged16(out, at, 0xde, size);
}

export function arrayHeaderSize(n: number): number {
  return n < 0x10 ? 1 : n < 0x10000 ? 3 : 5;
}

export function arrayHeader(out: Uint8Array, view: DataView, at: number, n: number): number {
  if (n < 0x10) {
    out[at] = 0x90 | n;
    return at + 1;
  }
  return n < 0x10000 ? tagged16(out, at, 0xdc, n) : tagged32(out, view, at, 0xdd, n);
}

export function binSize(n: number): number {
  return n + (n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);
}

export function writeBin(out: Uint8Array, view: DataView, at: number, v: Uint8Array): number {
  const n = v.byteLength;
  let p: number;
  if (n < 0x100) {
    out[at] = 0xc4;
    out[at + 1] = n;
    p = at + 2;
  } else p = n < 0x10000 ? tagged16(out, at, 0xc5, n) : tagged32(out, view, at, 0xc6, n);
  out.set(v, p);
  return p + n;
}

/**
 * UTF-8 length as msgpackr writes a string: a surrogate pair is 4 bytes, a
 * lone surrogate 3 (its own 3-byte form below 64 UTF-16 units, U+FFFD from
 * Buffer's encoder above: both 3 bytes)
 */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if ((c & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

export function strSize(s: string): number {
  const n = utf8Length(s);
  return n + (n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);
}

export function writeStr(out: Uint8Array, at: number, s: string): number {
  const n = utf8Length(s);
  let p = at;
  if (n < 0x20) out[p++] = 0xa0 | n;
  else if (n < 0x100) {
    out[p++] = 0xd9;
    out[p++] = n;
  } else if (n < 0x10000) {
    out[p++] = 0xda;
    out[p++] = n >> 8;
    out[p++] = n & 0xff;
  } else {
    out[p++] = 0xdb;
    out[p++] = (n >>> 24) & 0xff;
    out[p++] = (n >> 16) & 0xff;
    out[p++] = (n >> 8) & 0xff;
    out[p++] = n & 0xff;
  }
  if (n === s.length) {
    for (let i = 0; i < n; i++) out[p + i] = s.charCodeAt(i);
    return p + n;
  }
  // not ASCII: msgpackr's own loop below 64 UTF-16 units, Buffer's encoder from there
  if (s.length >= 0x40) {
    Buffer.from(out.buffer, out.byteOffset, out.byteLength).write(s, p, n, 'utf8');
    return p + n;
  }
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) out[p++] = c;
    else if (c < 0x800) {
      out[p++] = (c >> 6) | 0xc0;
      out[p++] = (c & 0x3f) | 0x80;
    } else if ((c & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      c = 0x10000 + ((c & 0x03ff) << 10) + (s.charCodeAt(i + 1) & 0x03ff);
      i++;
      out[p++] = (c >> 18) | 0xf0;
      out[p++] = ((c >> 12) & 0x3f) | 0x80;
      out[p++] = ((c >> 6) & 0x3f) | 0x80;
      out[p++] = (c & 0x3f) | 0x80;
    } else {
      out[p++] = (c >> 12) | 0xe0;
      out[p++] = ((c >> 6) & 0x3f) | 0x80;
      out[p++] = (c & 0x3f) | 0x80;
    }
  }
  return p;
}

export function numSize(v: number): number {
  if (v >>> 0 === v) return v < 0x80 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : 5;
  if (v >> 0 === v) return v >= -0x20 ? 1 : v >= -0x80 ? 2 : v >= -0x8000 ? 3 : 5;
  return 9;
}

/** msgpackr's number forms: smallest unsigned or signed int up to 32 bits, else float64 */
export function writeNum(out: Uint8Array, view: DataView, at: number, v: number): number {
  if (v >>> 0 === v) {
    if (v < 0x80) {
      out[at] = v;
      return at + 1;
    }
    if (v < 0x100) {
      out[at] = 0xcc;
      out[at + 1] = v;
      return at + 2;
    }
    return v < 0x10000 ? tagged16(out, at, 0xcd, v) : tagged32(out, view, at, 0xce, v);
  }
  if (v >> 0 === v) {
    if (v >= -0x20) {
      out[at] = 0x100 + v;
      return at + 1;
    }
    if (v >= -0x80) {
      out[at] = 0xd0;
      out[at + 1] = v + 0x100;
      return at + 2;
    }
    if (v >= -0x8000) {
      out[at] = 0xd1;
      view.setInt16(at + 1, v);
      return at + 3;
    }
    out[at] = 0xd2;
    view.setInt32(at + 1, v);
    return at + 5;
  }
  out[at] = 0xcb;
  view.setFloat64(at + 1, v);
  return at + 9;
}
