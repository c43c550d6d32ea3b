// The part of the `ws` package (8.x) that orch uses: a WebSocket server
// without its own HTTP server (the node agent's HTTPS server hands it
// upgrades) and a client (the API server dialling an agent). Declared here
// because @types/ws is not a dependency.
declare module 'ws' {
  import type { EventEmitter } from 'node:events';
  import type { ClientRequest, IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';
  import type { SecureContextOptions } from 'node:tls';

  export type RawData = Buffer | ArrayBuffer | Buffer[];

  export interface ClientOptions extends SecureContextOptions {
    headers?: Record<string, string>;
    perMessageDeflate?: boolean;
    maxPayload?: number;
    handshakeTimeout?: number;
    rejectUnauthorized?: boolean;
    servername?: string;
  }

  export class WebSocket extends EventEmitter {
    static readonly CONNECTING: 0;
    static readonly OPEN: 1;
    static readonly CLOSING: 2;
    static readonly CLOSED: 3;
    constructor(address: string, protocols?: string | string[], options?: ClientOptions);
    readonly protocol: string;
    readonly readyState: 0 | 1 | 2 | 3;
    readonly bufferedAmount: number;
    send(data: Buffer | Uint8Array | string, options?: { binary?: boolean }, cb?: (err?: Error) => void): void;
    close(code?: number, reason?: string | Buffer): void;
    terminate(): void;
    pause(): void;
    resume(): void;
    on(event: 'open', listener: () => void): this;
    on(event: 'message', listener: (data: RawData, isBinary: boolean) => void): this;
    on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'unexpected-response', listener: (req: ClientRequest, res: IncomingMessage) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    once(event: 'open', listener: () => void): this;
    once(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    once(event: 'error', listener: (err: Error) => void): this;
    once(event: string, listener: (...args: unknown[]) => void): this;
  }

  export interface ServerOptions {
    noServer?: boolean;
    maxPayload?: number;
    perMessageDeflate?: boolean;
    handleProtocols?: (protocols: Set<string>, request: IncomingMessage) => string | false;
  }

  export class WebSocketServer extends EventEmitter {
    constructor(options: ServerOptions);
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, callback: (ws: WebSocket, request: IncomingMessage) => void): void;
    close(cb?: () => void): void;
  }

  export default WebSocket;
}
