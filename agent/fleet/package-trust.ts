/**
 * Trust score of the project's packages (`[dependencies]`): is a version declared, is it pinned,
 * does a configured provider supply it. Pure: reads the configuration tree and the device list.
 */
import type { DeviceRecord } from '../devices/device-registry.js';
import { table } from './config-tables.js';

/** A package (or the whole project) is trusted from this score up. */
export const TRUSTED_PACKAGE_SCORE = 70;

export interface PackageTrustFactor {
  factor: 'version_declared' | 'version_pinned' | 'provider_known';
  passed: boolean;
  weight: number;
}

export interface PackageTrust {
  package: string;
  version: string | null;
  provider: string | null;
  used_by_devices: string[];
  factors: PackageTrustFactor[];
  score: number;
  trusted: boolean;
}

export interface PackageTrustReport {
  packages: PackageTrust[];
  /** Mean package score, rounded; null when there are no packages. */
  score: number | null;
  trusted: boolean;
  count: number;
}

/** `2.1.0`, `=2.1.0`, `2.1.0-rc.1`: an exact version, not a range. */
const PINNED = /^=?\d+\.\d+\.\d+([-+].*)?$/;

export function packageTrust(tree: Record<string, unknown> | undefined, devices: readonly DeviceRecord[], packageName?: string): PackageTrustReport {
  const deps = table(tree, 'dependencies');
  const providers = table(tree, 'providers');
  const providerPackages = new Map<string, string>();
  for (const [name, p] of Object.entries(providers)) {
    const pkg = (p as Record<string, unknown>)?.['package'];
    if (typeof pkg === 'string') providerPackages.set(pkg, name);
  }
  const names = Object.keys(deps).sort().filter((n) => !packageName || n === packageName);
  const packages = names.map((name): PackageTrust => {
    const spec = deps[name];
    const version = typeof spec === 'string' ? spec : typeof (spec as Record<string, unknown>)?.['version'] === 'string' ? String((spec as Record<string, unknown>)['version']) : null;
    const pinned = version !== null && PINNED.test(version);
    const provider = providerPackages.get(name) ?? null;
    const usedBy = provider ? devices.filter((d) => d.provider === provider).map((d) => d.id) : [];
    const factors: PackageTrustFactor[] = [
      { factor: 'version_declared', passed: version !== null, weight: 30 },
      { factor: 'version_pinned', passed: pinned, weight: 40 },
      { factor: 'provider_known', passed: provider !== null, weight: 30 },
    ];
    const score = factors.reduce((n, f) => n + (f.passed ? f.weight : 0), 0);
    return { package: name, version, provider, used_by_devices: usedBy, factors, score, trusted: score >= TRUSTED_PACKAGE_SCORE };
  });
  const overall = packages.length ? Math.round(packages.reduce((n, p) => n + p.score, 0) / packages.length) : null;
  return { packages, score: overall, trusted: overall !== null && overall >= TRUSTED_PACKAGE_SCORE, count: packages.length };
}
