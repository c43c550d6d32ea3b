// Small pieces the @kubernetes/client-node tests share (test/integration/client-node-*.test.ts,
// test/nodeagent/client-node-*.test.ts).
import { Writable } from 'node:stream';

/** a Writable that keeps what it is given (an Exec's or Cp's output stream) */
export function sink(): Writable & { text(): string } {
  const chunks: Buffer[] = [];
  const w = new Writable({
    write(c: Buffer, _e, cb) {
      chunks.push(Buffer.from(c));
      cb();
    },
  });
  return Object.assign(w, { text: () => Buffer.concat(chunks).toString() });
}
