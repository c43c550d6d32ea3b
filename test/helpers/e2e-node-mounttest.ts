// kube's e2e volume tests read files with agnhost `mounttest` (--file_content,
// --file_mode, --file_content_in_loop). The simulated runtime runs `sh -c`
// scripts as real host processes with container paths rewritten to the
// volumes' host paths (docs/nodeagent.md "What the simulator runs"), so these
// helpers build shell scripts that print mounttest's lines: `cat` for the
// content, `stat -L -c %A` for the mode (Go's FileMode text, `-rw-r--r--`; -L
// as mounttest's os.Stat follows the atomic writer's links).

/**
 * a path as mounttest shows it, split in two shell words after its leading
 * slash (`'/''etc/podinfo/x'`) so the simulator's rewriting of container paths
 * leaves the shown text alone (a mount at `/test-volume` included)
 */
function shown(path: string): string {
  return path.startsWith('/') ? `'/''${path.slice(1)}'` : `'${path}'`;
}

/** mounttest --file_content=… --file_mode=…: `content of file "p": …` and `mode of file "p": -rw-r--r--` lines */
export function mounttest(o: { content?: string[]; mode?: string[] }): string[] {
  const lines = [
    ...(o.mode ?? []).map((p) => `printf 'mode of file "%s": %s\\n' ${shown(p)} "$(stat -L -c %A ${p})"`),
    ...(o.content ?? []).map((p) => `printf 'content of file "%s": %s\\n' ${shown(p)} "$(cat ${p})"`),
  ];
  return ['sh', '-c', lines.join('; ')];
}

/**
 * mounttest --break_on_expected_content=false --file_content_in_loop=…: the
 * file's content (or `Error reading file p: …`) every second, for `seconds`
 */
export function mounttestLoop(path: string, seconds = 240): string[] {
  return ['sh', '-c', `i=0; while [ $i -lt ${seconds} ]; do if c=$(cat ${path} 2>&1); then printf 'content of file "%s": %s\\n' ${shown(path)} "$c"; else printf 'Error reading file %s: %s\\n' ${shown(path)} "$c"; fi; i=$((i+1)); sleep 1; done`];
}

/** kube's getFileModeRegex on Linux: the mode as Go prints an os.FileMode (default 0644) */
export function fileMode(path: string, mode = 0o644): string {
  const bits = 'rwxrwxrwx';
  const text = [...bits].map((ch, i) => (mode & (1 << (8 - i)) ? ch : '-')).join('');
  return `mode of file "${path}": -${text}`;
}
