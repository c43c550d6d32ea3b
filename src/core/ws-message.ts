// A WebSocket message as one Buffer: the `ws` library hands a binary message
// over as a Buffer, an ArrayBuffer or a list of fragments (its RawData).

export function messageBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
