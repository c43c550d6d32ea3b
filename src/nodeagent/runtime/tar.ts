// A minimal ustar writer (POSIX.1-1988) for the simulator's checkpoint
// archives: regular files only, 512-byte headers, two zero blocks at the end.

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtimeSec: number): Buffer {
  const h = Buffer.alloc(512, 0);
  h.write(name.slice(0, 100), 0, 'utf8');
  h.write(octal(0o600, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtimeSec, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii'); // checksum is computed with spaces here
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

export function tarArchive(files: { name: string; content: Buffer }[], mtimeSec: number): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(header(f.name, f.content.length, mtimeSec), f.content);
    const pad = (512 - (f.content.length % 512)) % 512;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}
