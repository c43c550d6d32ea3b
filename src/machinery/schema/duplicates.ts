// Duplicate-field detection for request bodies (spec 000 §4.8): JSON.parse
// and YAML loaders silently keep the last of two equal keys, so the raw text
// is scanned separately. Paths are JSON paths as Kubernetes' strict decoder
// prints them (`metadata.name`, `spec.containers[0].name`), ready for
// `duplicate field "<path>"`.

import { isMap, isScalar, isSeq, parseAllDocuments, type Node as YamlNode } from 'yaml';

const QUOTE = 34;
const BACKSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const COMMA = 44;

interface Frame {
  /** null for arrays */
  keys: Set<string> | null;
  index: number;
  /** this container's own path */
  path: string;
  /** last key read in an object frame (the pending value's key) */
  key: string;
}

/** a repeated key of a JSON document: its path and where the repeated key starts in the text */
export interface DuplicateField {
  path: string;
  offset: number;
}

/**
 * Paths of duplicated keys in a JSON document. A linear scan with no value
 * decoding: only object keys are materialised. Malformed JSON yields whatever
 * was found before the error (the JSON parser reports the syntax error).
 */
export function findDuplicateFields(jsonText: string): string[] {
  return findDuplicateKeys(jsonText).map((d) => d.path);
}

/** the duplicated keys of a JSON document, in document order, with where each repeat is */
export function findDuplicateKeys(jsonText: string): DuplicateField[] {
  return scanKeys(jsonText, undefined);
}

/**
 * where the first occurrence of each of `paths` starts in a JSON document (to place
 * unknown fields among duplicates as kube's strict decoder reports them); a second
 * scan, made only when a body has several such problems
 */
export function firstKeyOffsets(jsonText: string, paths: ReadonlySet<string>): Map<string, number> {
  const found = new Map<string, number>();
  scanKeys(jsonText, { paths, found });
  return found;
}

function scanKeys(jsonText: string, want: { paths: ReadonlySet<string>; found: Map<string, number> } | undefined): DuplicateField[] {
  const out: DuplicateField[] = [];
  const stack: Frame[] = [];
  const s = jsonText;
  const n = s.length;
  let i = 0;
  // after a key's ':' the next container/value belongs to that key
  let expectKey = false;
  // position of the next backslash at or after where it was last looked for
  // (n when none): kept across strings, so the scan for it stays linear
  let nextBackslash = -1;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      // scan the string
      // the closing quote is the next one not escaped: found with indexOf
      // (native) rather than char by char, which mattered for long values
      let j = i + 1;
      let escaped = false;
      for (;;) {
        const q = s.indexOf('"', j);
        if (q < 0) {
          j = n;
          break;
        }
        if (nextBackslash < j) nextBackslash = backslashFrom(s, j);
        if (nextBackslash > q) {
          j = q;
          break;
        }
        // a backslash before the quote escapes the character after it
        escaped = true;
        j = nextBackslash + 2;
      }
      if (expectKey) {
        const top = stack[stack.length - 1];
        let key = s.slice(i + 1, j);
        if (escaped) {
          try {
            key = JSON.parse(s.slice(i, j + 1)) as string;
          } catch {
            // malformed escape: compare raw text
          }
        }
        // expectKey is only set with an object frame on top
        if (top?.keys) {
          if (top.keys.has(key)) out.push({ path: childPath(top.path, key), offset: i });
          else {
            top.keys.add(key);
            if (want !== undefined) {
              const p = childPath(top.path, key);
              if (want.paths.has(p) && !want.found.has(p)) want.found.set(p, i);
            }
          }
          top.key = key;
        }
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === LBRACE || c === LBRACKET) {
      const parent = stack.length > 0 ? stack[stack.length - 1] : undefined;
      let path = '';
      if (parent) path = parent.keys ? childPath(parent.path, parent.key) : `${parent.path}[${parent.index}]`;
      stack.push({ keys: c === LBRACE ? new Set() : null, index: 0, path, key: '' });
      expectKey = c === LBRACE;
      i++;
      continue;
    }
    if (c === RBRACE || c === RBRACKET) {
      stack.pop();
      expectKey = false;
      i++;
      continue;
    }
    if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top) {
        if (top.keys) expectKey = true;
        else top.index++;
      }
      i++;
      continue;
    }
    i++;
  }
  return out;
}

/** the next backslash at or after `from`, or the text's length (a module function: no closure per body) */
function backslashFrom(s: string, from: number): number {
  const b = s.indexOf('\\', from);
  return b < 0 ? s.length : b;
}

function childPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

/**
 * Paths of duplicated keys in a YAML text (every document of a stream; later
 * documents' paths are prefixed with nothing, as each is a separate object).
 */
export function findDuplicateFieldsYaml(text: string): string[] {
  return yamlDuplicates(text).map((d) => d.path);
}

/**
 * the duplicate keys of a YAML text as Kubernetes' strict YAML decoder (yaml.v2)
 * reports them: `line 9: key "foo" already set in map`, the line the repeated key is on
 */
export function duplicateKeyLinesYaml(text: string): string[] {
  return yamlDuplicates(text).map((d) => {
    let line = 1;
    for (let i = 0; i < d.offset; i++) if (text.charCodeAt(i) === 10) line++;
    return `line ${line}: key ${JSON.stringify(d.key)} already set in map`;
  });
}

interface YamlDuplicate {
  path: string;
  key: string;
  /** where the repeated key starts in the text */
  offset: number;
}

function yamlDuplicates(text: string): YamlDuplicate[] {
  const out: YamlDuplicate[] = [];
  for (const doc of parseAllDocuments(text, { uniqueKeys: false })) {
    if ('contents' in doc && doc.contents) walkYaml(doc.contents as YamlNode, '', out);
  }
  return out;
}

function walkYaml(node: YamlNode, path: string, out: YamlDuplicate[]): void {
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const k = pair.key;
      const key = isScalar(k) ? String(k.value) : String(k);
      const p = childPath(path, key);
      if (seen.has(key)) out.push({ path: p, key, offset: isScalar(k) ? (k.range?.[0] ?? 0) : 0 });
      else seen.add(key);
      if (pair.value && typeof pair.value === 'object') walkYaml(pair.value as YamlNode, p, out);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, idx) => {
      if (item && typeof item === 'object') walkYaml(item as YamlNode, `${path}[${idx}]`, out);
    });
  }
}
