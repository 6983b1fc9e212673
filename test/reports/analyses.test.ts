import { describe, expect, it } from 'vitest';
import { parseProgram } from '../../agent/programs/language/index.js';
import { accreditationMarkdown, accreditationReport, auditExportId, COMPLIANCE_PROFILES, evaluateCompliance, findComplianceProfile } from '../../agent/compliance/index.js';
import { safetyAudit } from '../../agent/programs/assurance/safety-audit.js';
import { threatRisk } from '../../agent/programs/assurance/threat-risk.js';
import { recoveryCoverage } from '../../agent/programs/assurance/recovery-coverage.js';
import { secureBootScore } from '../../agent/programs/assurance/secure-boot.js';
import { scenarioCoverage } from '../../agent/programs/assurance/scenario-coverage.js';
import { csvField } from '../../agent/reports/report-export.js';
import { parsePhase, parsePhasePath } from '../../agent/reports/digital-thread.js';

const program = (src: string) => parseProgram(src, 'unit.sd');

const SECURE = `
import trust.jetson;
kill_switch Stop { remote_signed; action { emergency_stop; } }
tamper_policy Firmware { on checksum_mismatch { refuse_start; } on seal_broken { lock; } }
recovery_policy R { on gps.lost { hold; } on battery.low { dock; } }
continuity_policy C { on peer.lost { takeover; } }
robot Cart {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    actuator drive: DifferentialDrive;
    exposes capabilities [obstacle_avoidance];
    safety { max_speed = 5 km/h; stop_if lidar.read().nearest_distance < 0.3 m; }
    mode normal { }
}
deploy Cart to RaspberryPi5;
`;

describe('compliance profiles and evaluation', () => {
  it('lists ten built-ins and resolves names trimmed, case-insensitively and by alias', () => {
    expect(COMPLIANCE_PROFILES.map((p) => p.name)).toEqual(['industrial', 'warehouse', 'medical', 'agriculture', 'defense', 'iso26262', 'iso13849', 'iec61508', 'research', 'human_collaboration']);
    expect(findComplianceProfile(' Automotive ')?.name).toBe('iso26262');
    // Names that are Object.prototype members are unknown names, not aliases.
    for (const name of ['constructor', '__proto__', 'toString']) {
      expect(findComplianceProfile(name), name).toBeNull();
      expect(parsePhase(name), name).toBeNull();
    }
    expect(findComplianceProfile('FUNCTIONAL_SAFETY')?.name).toBe('iec61508');
    expect(findComplianceProfile('hri')?.name).toBe('human_collaboration');
    expect(findComplianceProfile('nope')).toBeNull();
  });

  it('converts speeds: 5 km/h (1.39 m/s) passes a 1.5 cap and fails a 1.0 cap', () => {
    const p = program(SECURE);
    const industrial = evaluateCompliance(p, findComplianceProfile('industrial')!, 'unit.sd');
    expect(industrial.violations.filter((v) => v.requirement === 'max_speed')).toEqual([]);
    const medical = evaluateCompliance(p, findComplianceProfile('medical')!, 'unit.sd');
    expect(medical.violations.find((v) => v.requirement === 'max_speed')?.message).toBe("Robot 'Cart' max_speed 1.389 m/s exceeds the cap 1 m/s");
  });

  it('accreditation: checklist rows, tamper branches, secure-boot contracts, deterministic id, markdown', () => {
    const p = program(SECURE);
    const report = accreditationReport(p, findComplianceProfile('defense')!, 'unit.sd', Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(report.generated_at).toBe('2026-01-02T03:04:05.000Z');
    expect(accreditationReport(p, findComplianceProfile('defense')!, 'unit.sd', 1_700_000_000_500, { generatedAt: 'unix' }).generated_at).toBe('unix-1700000000');
    expect(report.evidence_checklist.map((e) => e.id)).toEqual(['kill_switch', 'readiness', 'health_checks', 'assurance_case', 'secure_comm', 'tamper_policy', 'secure_boot', 'template_notice']);
    const row = (id: string) => report.evidence_checklist.find((e) => e.id === id)!;
    expect(row('tamper_policy')).toMatchObject({ status: 'ok', detail: '2 tamper_policy branches' });
    expect(row('secure_boot')).toMatchObject({ status: 'ok', detail: '95/100 score, 1 contracts' });
    expect(row('kill_switch').status).toBe('ok');
    expect(row('assurance_case')).toMatchObject({ status: 'gap', detail: 'requirement not satisfied' });
    expect(report.audit_export_id).toBe(auditExportId('defense', 'unit.sd', report.passed, report.evaluation.violations.length));
    const md = accreditationMarkdown(report).split('\n');
    expect(md[0]).toBe('# Compliance accreditation export — defense');
    expect(md).toContain('- [ ] **Assurance case** — requirement not satisfied (gap)');
    expect(md).toContain('## Violations');
  });
});

describe('report analyses', () => {
  it('safety audit: a program without kill switch, health, safety and modes', () => {
    const audit = safetyAudit(program('robot Bare { actuator arm: Gripper; }\n'));
    expect(audit.findings).toEqual(
      expect.arrayContaining([
        { severity: 'critical', category: 'kill_switch', message: 'No kill switch declared' },
        { severity: 'medium', category: 'health', message: 'No health checks declared' },
        { severity: 'high', category: 'robot_safety', message: "Robot 'Bare' has no safety block" },
        { severity: 'medium', category: 'robot_modes', message: "Robot 'Bare' declares no modes" },
      ]),
    );
    expect(audit.passed).toBe(false);
    // A signed kill switch and a safety block: what remains comes from the hardware verification
    // (error → critical, warning → medium) and the missing health checks.
    const secure = safetyAudit(program(SECURE));
    expect(secure.findings.filter((f) => ['kill_switch', 'robot_safety', 'robot_modes'].includes(f.category))).toEqual([]);
    expect(secure.findings).toContainEqual({ severity: 'critical', category: 'verification', message: "Sensor 'lidar' (Lidar) not supported by RaspberryPi5" });
    expect(secure.counts).toEqual({ critical: 1, high: 0, medium: 2, low: 0 });
  });

  it('threat risk: import 15 + deploy 30 + signed kill switch 30 = 75', () => {
    const t = threatRisk(program(SECURE));
    expect(t.assessments.map((x) => x.level)).toEqual(['medium', 'high', 'high']);
    expect(t.score).toBe(75);
  });

  it('recovery coverage: gps and battery covered, peer loss partial → (200 + 50) / 11 = 22', () => {
    const r = recoveryCoverage(program(SECURE));
    expect(r.failures.find((f) => f.failure === 'fleet_peer_loss')?.status).toBe('partial');
    expect(r.failures.filter((f) => f.status === 'covered').map((f) => f.failure)).toEqual(['gps_loss', 'battery_critical']);
    expect(r.percent).toBe(22);
  });

  it('secure boot: trust.jetson scores its package trust and passes', () => {
    expect(secureBootScore(program(SECURE))).toMatchObject({ present: true, score: 95, passed: true });
    expect(secureBootScore(program('robot A { }\n'))).toMatchObject({ present: false, score: 0, passed: false });
  });

  it('scenario coverage: seven scenarios and their recommendations', () => {
    const c = scenarioCoverage(program(SECURE));
    expect(c.scenarios.map((s) => s.scenario)).toEqual(['obstacle_avoidance', 'gps_failure', 'battery_failure', 'connectivity_failure', 'provider_failure', 'takeover_failure', 'recovery_failure']);
    expect(c.scenarios[0]!.status).toBe('covered');
    expect(c.scenarios[5]!.status).toBe('covered');
    expect(c.percent).toBe(Math.floor(c.scenarios.reduce((s, x) => s + x.score, 0) / 7));
    expect(scenarioCoverage(program('robot A { }\n')).recommendations).toEqual([
      'Add safety { stop_if ... } or lidar proximity rule for obstacle_avoidance',
      'Add recovery_policy on gps_loss with degraded navigation fallback',
      'Add continuity_policy with auto_takeover for takeover_failure',
    ]);
  });

  it('CSV fields and phase paths', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvField(null)).toBe('');
    expect(parsePhasePath('requirements->operation')).toEqual(['requirement', 'design', 'deploy', 'operate']);
    expect(parsePhasePath('operate->design')).toEqual(['operate', 'design']);
    expect(parsePhasePath('design,retire')).toEqual(['design', 'deploy', 'operate', 'retire']);
    expect(parsePhasePath('design->')).toBeNull();
    expect(parsePhasePath('design->soon')).toBeNull();
  });
});
