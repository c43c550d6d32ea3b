// The agent's feature gates (config `featureGates`, spec 002 §9 feature states).

export const FEATURE_GATES: Record<string, { default: boolean; stage: 'alpha' | 'beta' | 'GA' }> = {
  ContainerCheckpoint: { default: true, stage: 'beta' },
  SystemdWatchdog: { default: true, stage: 'beta' },
  InPlacePodVerticalScaling: { default: false, stage: 'alpha' },
  // kube 1.32's KEP-4603: `crashLoopBackOff.maxContainerRestartPeriod` caps a crash-looping container's back-off
  KubeletCrashLoopBackOffMax: { default: false, stage: 'alpha' },
};

export function featureEnabled(gates: Record<string, boolean>, name: string): boolean {
  return gates[name] ?? FEATURE_GATES[name]?.default ?? false;
}

export function unknownGates(gates: Record<string, boolean>): string[] {
  return Object.keys(gates).filter((g) => !(g in FEATURE_GATES));
}
