// `/version`: the Kubernetes version.Info shape. orch serves the 1.32 API
// surface (spec 000 §9.3 lists removals up to 1.32), so it reports 1.32 as
// its compatibility level; gitVersion carries orch's own version.

export const ORCH_VERSION = '0.1.0';

export function versionInfo(): Record<string, string> {
  return {
    major: '1',
    minor: '32',
    gitVersion: `v1.32.0+orch.${ORCH_VERSION}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node ${process.version}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
