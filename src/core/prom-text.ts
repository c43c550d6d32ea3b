// The Prometheus text exposition format (version 0.0.4) as far as the
// resource metrics pipeline needs it (docs/metrics.md): the node agent writes
// its `/metrics/resource` with it, as kubelet's client_golang does (families
// sorted by name, label names sorted, values as Go's strconv 'g' shortest,
// timestamps in ms), and the API server's scraper parses it back.

/** a sample: name, labels, value and optional timestamp (ms since the epoch) */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

/** a metric family to write */
export interface PromFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: { labels: Record<string, string>; value: number; timestampMs?: number }[];
}

/** a float as client_golang writes it: Go's strconv.FormatFloat(f, 'g', -1, 64), with 0/1/-1 and Inf/NaN spelled out */
export function formatGoFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  // the shortest digits that read back as f, then Go's 'g' choice for the shortest precision:
  // %e when the exponent is < -4 or ≥ 6 (strconv's eprec = 6), e.g. 1.2345e+07
  const [mant, expText] = f.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  // fixed notation with the same digits (Number's toString is fixed for 1e-7 ≤ |f| < 1e21)
  return String(f);
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function labelText(labels: Record<string, string>): string {
  const keys = Object.keys(labels).sort();
  return keys.length === 0 ? '' : `{${keys.map((k) => `${k}="${escapeLabel(labels[k]!)}"`).join(',')}}`;
}

/** families in name order, samples in label order; a family without samples is left out (as client_golang) */
export function writePromText(families: PromFamily[]): string {
  let out = '';
  for (const f of [...families].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (f.samples.length === 0) continue;
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    const lines = f.samples.map((s) => ({ key: labelText(s.labels), s }));
    lines.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const { key, s } of lines) out += `${f.name}${key} ${formatGoFloat(s.value)}${s.timestampMs !== undefined ? ` ${Math.trunc(s.timestampMs)}` : ''}\n`;
  }
  return out;
}

export class PromParseError extends Error {}

function parseValue(t: string, line: number): number {
  if (t === '+Inf' || t === 'Inf') return Infinity;
  if (t === '-Inf') return -Infinity;
  if (t === 'NaN') return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) throw new PromParseError(`line ${line}: "${t}" is not a number`);
  return Number(t);
}

/**
 * The samples of a text exposition: comments and blank lines skipped; a malformed line throws
 * PromParseError (metrics-server rejects the whole scrape, as here).
 */
export function parsePromText(text: string): PromSample[] {
  const out: PromSample[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (!m) throw new PromParseError(`line ${n + 1}: no metric name`);
    const name = m[1]!;
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      for (;;) {
        while (line[i] === ' ') i++;
        if (line[i] === '}') {
          i++;
          break;
        }
        const k = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
        if (!k || line[i + k[0].length] !== '=' || line[i + k[0].length + 1] !== '"') throw new PromParseError(`line ${n + 1}: bad label`);
        i += k[0].length + 2;
        let v = '';
        for (; i < line.length && line[i] !== '"'; i++) {
          if (line[i] === '\\') {
            i++;
            v += line[i] === 'n' ? '\n' : (line[i] ?? '');
          } else v += line[i];
        }
        if (line[i] !== '"') throw new PromParseError(`line ${n + 1}: unterminated label value`);
        i++;
        labels[k[0]] = v;
        while (line[i] === ' ') i++;
        if (line[i] === ',') i++;
        else if (line[i] !== '}') throw new PromParseError(`line ${n + 1}: expected , or }`);
      }
    }
    const rest = line.slice(i).trim().split(/\s+/);
    if (rest.length < 1 || rest.length > 2 || rest[0] === '') throw new PromParseError(`line ${n + 1}: expected a value and an optional timestamp`);
    const sample: PromSample = { name, labels, value: parseValue(rest[0]!, n + 1) };
    if (rest[1] !== undefined) {
      if (!/^-?\d+$/.test(rest[1])) throw new PromParseError(`line ${n + 1}: bad timestamp "${rest[1]}"`);
      sample.timestampMs = Number(rest[1]);
    }
    out.push(sample);
  }
  return out;
}
