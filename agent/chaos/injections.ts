/** The injection kinds the static chaos experiment knows (`GET /v1/chaos/injections`). */
export const CHAOS_INJECTIONS = [
  'gps-failure',
  'camera-failure',
  'lidar-failure',
  'connectivity-failure',
  'provider-failure',
  'package-failure',
  'battery-failure',
] as const;

export const NO_PROGRAM_MESSAGE = 'no program loaded; pass --program to Control Center to run chaos experiments';

export type ChaosKind = 'gps' | 'camera' | 'lidar' | 'connectivity' | 'provider' | 'package' | 'battery';

/** `GPS_Failure` → `gps`; `network` → `connectivity`; anything else → null. */
export function chaosKind(label: string): ChaosKind | null {
  const l = label.toLowerCase().replace(/_/g, '-').replace(/-failure$/, '');
  if (l === 'network') return 'connectivity';
  return (['gps', 'camera', 'lidar', 'connectivity', 'provider', 'package', 'battery'] as const).find((k) => k === l) ?? null;
}
