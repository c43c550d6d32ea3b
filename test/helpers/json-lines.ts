// Splits a stream of text chunks into complete lines (watch events are JSON
// lines, spec 000 §2.5): each complete, non-blank line is handed on once.

export function lineSplitter(onLine: (line: string) => void): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim() !== '') onLine(line);
    }
  };
}
