// A python echo server script (in the spirit of the kubernetes python client's e2e port_server.py):
// one threaded echo server per port given as argument, bound to 0.0.0.0, after `delaySeconds`.
import { writeFile } from 'node:fs/promises';

export async function writePythonEchoServer(path: string, delaySeconds = 0): Promise<void> {
  const lines = [
    'import socketserver, sys, threading, time',
    'class H(socketserver.BaseRequestHandler):',
    '    def handle(self):',
    '        while True:',
    '            d = self.request.recv(1024)',
    '            if not d: break',
    '            self.request.sendall(d)',
    `time.sleep(${delaySeconds})`,
    'for p in sys.argv[1:]:',
    "    s = socketserver.ThreadingTCPServer(('0.0.0.0', int(p)), H)",
    '    threading.Thread(target=s.serve_forever, daemon=True).start()',
    "print('serving', flush=True)",
    'time.sleep(600)',
  ];
  await writeFile(path, lines.join('\n'));
}
