import { describe, expect, it } from 'vitest';
import { compareVersions, deviceReadiness, devicePoolSummary } from '../../agent/devices/device-readiness.js';
import type { DeviceRecord } from '../../agent/devices/device-registry.js';
import { allProfiles, builtinProfile, normaliseProfileName, profileKindOf, resolveProfile } from '../../agent/deployment/profiles.js';
import { entityGovernance, isGoverned, parseAutonomy, parseMaturity, parseRisk } from '../../agent/governance/entity-governance.js';
import { blocksLiveDeployment, governanceReadinessBlockers, renderBlockers } from '../../agent/governance/readiness-blockers.js';
import { parseProgram } from '../../agent/programs/language/index.js';
import { safetyAudit } from '../../agent/programs/assurance/safety-audit.js';

const device = (over: Partial<DeviceRecord>): DeviceRecord =>
  ({ id: 'd', firmware_version: null, trust_level: 'trusted', lifecycle_state: 'active', health_status: 'unknown', ...over }) as DeviceRecord;

describe('profile names that are object keys', () => {
  it('constructor, __proto__ and toString are unknown names, not prototype members', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(profileKindOf(name), name).toBeNull();
      expect(builtinProfile(name), name).toBeNull();
      expect(resolveProfile(name).kind, name).toEqual({ custom: normaliseProfileName(name) });
    }
  });
});

describe('device readiness rules', () => {
  it('compares dotted versions: missing parts are 0, non-numeric parts skipped', () => {
    expect(compareVersions('1.2.0', '1.10')).toBe(-1);
    expect(compareVersions('2.0', '1.9.9')).toBe(1);
    expect(compareVersions('1.2', '1.2.0')).toBe(0);
    expect(compareVersions('1.x.3', '1.3')).toBe(0);
  });

  it('blockers in order: calibration (status or past expiry), firmware floor, lifecycle, identity, health', () => {
    const now = 1_000_000;
    const all = deviceReadiness(
      device({ id: 'x', lifecycle_state: 'quarantined', trust_level: 'unknown' }),
      { calibration_expiry_ms: now - 1, min_firmware_version: '1.0', health_status: 'critical' },
      now,
    );
    expect(all).toEqual({
      device_id: 'x',
      health_status: 'critical',
      calibration_status: 'unknown',
      calibration_expired: true,
      firmware_supported: false,
      identity_verified: false,
      lifecycle_ok: false,
      readiness_blocked: true,
      blockers: ['calibration_expired', 'firmware_unsupported', 'lifecycle_quarantined', 'identity_unverified', 'health_critical'],
    });
    const fine = deviceReadiness(device({ firmware_version: '1.10.1', trust_level: 'Verified' }), { calibration_status: 'VALID', calibration_expiry_ms: now + 1, min_firmware_version: '1.10' }, now);
    expect(fine).toMatchObject({ calibration_status: 'valid', readiness_blocked: false, blockers: [] });
  });

  it('pool summary counts lifecycle states; a stored healthy state counts as active and healthy equals active', () => {
    const s = devicePoolSummary([device({ lifecycle_state: 'active' }), device({ lifecycle_state: 'healthy' }), device({ lifecycle_state: 'failed' }), device({ lifecycle_state: 'degraded' })]);
    expect(s).toEqual({ total: 4, discovered: 0, quarantined: 0, verified: 0, assigned: 0, active: 2, healthy: 2, degraded: 1, offline: 0, failed: 1, retired: 0 });
  });
});

describe('profile catalogue', () => {
  it('19 kinds, aliases and normalised names; unknown names resolve to a custom profile but are no built-in', () => {
    expect(allProfiles()).toHaveLength(19);
    expect(normaliseProfileName(' Search-Rescue ')).toBe('search_rescue');
    expect(['industrial', 'healthcare', 'or', 'sar', 'agri', 'adas', 'automotive', 'building', 'military', 'lab'].map((a) => profileKindOf(a))).toEqual([
      'factory', 'hospital', 'operating_room', 'search_rescue', 'agriculture', 'road_vehicle', 'road_vehicle', 'smart_building', 'defense', 'research',
    ]);
    expect(builtinProfile('Moon Base')).toBeNull();
    expect(resolveProfile('Moon Base')).toMatchObject({ kind: { custom: 'moon_base' }, display_name: 'moon_base', required_capabilities: [] });
    expect(builtinProfile('road-vehicle')).toMatchObject({ default_risk_level: 'life_critical', required_certifications: ['iso26262', 'iso21448'] });
  });
});

describe('governance of an entity and its readiness blockers', () => {
  it('parses values leniently with the documented fallbacks', () => {
    expect(['3', 'l4', 'level_5', 'conditional', 'Partial', 'nonsense'].map(parseAutonomy)).toEqual([
      'conditional_autonomy', 'high_autonomy', 'full_autonomy', 'conditional_autonomy', 'partial_automation', 'manual',
    ]);
    expect(['prod', 'Pre-Production', 'staging', 'sim', 'whatever'].map(parseMaturity)).toEqual(['production', 'pre_production', 'pre_production', 'simulation', 'concept']);
    expect(['moderate', 'safety critical', 'x'].map(parseRisk)).toEqual(['medium', 'life_critical', 'negligible']);
  });

  it('metadata wins over the declared table, which wins over the system section; the owner is the responsible person', () => {
    const g = entityGovernance(
      { id: 'r', owner: 'ana', metadata: { 'governance.risk_level': 'high', other: 'x' }, governance: { risk_level: 'low', operational_maturity: 'pilot', emergency_contact: { name: 'Desk', email: 'desk@example.org' } } },
      { risk_level: 'medium', deployment_owner: 'ops', responsible_person: 'bob' },
    );
    expect(g).toEqual({ risk_level: 'high', operational_maturity: 'pilot', emergency_contact: 'desk@example.org', deployment_owner: 'ops', responsible_person: 'ana' });
    expect(isGoverned(g)).toBe(true);
    expect(isGoverned(entityGovernance({ id: 'x', metadata: {} }, null))).toBe(false);
  });

  it('the four blockers, with high ones blocking live deployment', () => {
    const live = governanceReadinessBlockers({ operational_maturity: 'production', certification_status: 'testing', autonomy_level: 'conditional' }, 'unknown');
    expect(live.map((b) => [b.severity, b.message])).toEqual([
      ['high', "Live maturity 'production' requires validated/certified status (current: testing)"],
      ['high', 'Live deployment requires responsible person, deployment owner, and emergency contact'],
      ['high', "Autonomy 'conditional_autonomy' blocked until trust posture is trusted or verified"],
    ]);
    expect(blocksLiveDeployment(live)).toBe(true);
    expect(renderBlockers('Rover', live.slice(0, 1))).toEqual(["  [high] Rover — Live maturity 'production' requires validated/certified status (current: testing)"]);
    const early = governanceReadinessBlockers({ risk_level: 'medium', operational_maturity: 'prototype', autonomy_level: 'full' }, 'trusted');
    expect(early).toEqual([{ severity: 'medium', code: 'risk_maturity', message: 'Medium+ risk requires at least simulation maturity' }]);
    expect(blocksLiveDeployment(early)).toBe(false);
    const certified = { operational_maturity: 'certified', certification_status: 'certified', responsible_person: 'a', deployment_owner: 'b', emergency_contact: 'c', risk_level: 'critical' };
    expect(governanceReadinessBlockers(certified, 'verified')).toEqual([]);
  });
});

describe('safety audit', () => {
  it('kill switches, health checks, robot safety and modes, verification and security findings', () => {
    const program = parseProgram(
      `kill_switch Stop { priority: critical; action { emergency_stop; } }
robot Rover {
    sensor lidar: Lidar;
    sensor feed: Camera on "http://user:pw@10.0.0.2/feed";
    actuator wheels: DifferentialDrive;
}`,
      'r.sd',
    );
    const audit = safetyAudit(program, { config: null });
    const by = (category: string) => audit.findings.filter((f) => f.category === category).map((f) => f.severity);
    expect(by('kill_switch')).toEqual(['high']);
    expect(by('health')).toEqual(['medium']);
    expect(by('robot_safety')).toEqual(['high']);
    expect(by('robot_modes')).toEqual(['medium']);
    // Credentials in an endpoint are a security error (critical); plaintext http a warning (high).
    expect(by('security')).toEqual(expect.arrayContaining(['critical', 'high']));
    expect(audit.passed).toBe(false);
    expect(audit.counts.critical + audit.counts.high + audit.counts.medium + audit.counts.low).toBe(audit.findings.length);
    expect(safetyAudit(parseProgram('robot R { sensor l: Lidar; }', 'r.sd'), { config: null }).findings[0]).toEqual({ severity: 'critical', category: 'kill_switch', message: 'No kill switch declared' });
  });
});
