import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assignmentsOf, certificationProof, certificationsOf } from '../../agent/ota/plan.js';
import { parseSource } from '../../agent/programs/program-files.js';
import { SOIL_PROGRAM } from './fixture.js';

const soil = fs.readFileSync(SOIL_PROGRAM, 'utf8');

describe('certification proof checklist (docs/operations.md § Rollouts, "Certification gate")', () => {
  it('deploy without certify: a warning normally, an error under the strict proof; summary from the failed strict proof', () => {
    const proof = certificationProof(parseSource(soil, 'soil.sd'));
    expect(proof.passed).toBe(true);
    expect(proof.passed_strict).toBe(false);
    expect(proof.checklist).toContainEqual(expect.objectContaining({ severity: 'warning', message: expect.stringMatching(/^Deploy targets declared without certification metadata — add certify ISO13849/) }));
    expect(proof.strict_checklist).toContainEqual(expect.objectContaining({ severity: 'error', message: expect.stringMatching(/^Deploy targets require certification metadata — /) }));
    expect(proof.checklist).toContainEqual({ category: 'certify', severity: 'pass', message: 'Deploy target SoilStation@ESP32 covered by certification proof checklist', line: expect.any(Number), column: expect.any(Number) });
    // SoilStation has no mission and no safety block: errors when strict; no program-level safety_zone: a warning.
    expect(proof.strict_checklist.filter((i) => i.severity === 'error').map((i) => i.message)).toEqual([
      expect.stringMatching(/^Deploy targets require certification metadata/),
      "Deployed robot 'SoilStation' declares no mission",
      "Deployed robot 'SoilStation' declares no safety block",
    ]);
    expect(proof).toMatchObject({ error_count: 3, warning_count: 1, summary: 'Certification proof failed with 3 error(s) and 1 warning(s)' });
    expect(assignmentsOf(parseSource(soil, 'soil.sd'))).toEqual([{ robot_name: 'SoilStation', hardware: 'ESP32' }]);
  });

  it('strict rules on standards and deploy robots; a passing proof names its targets and certify blocks', () => {
    const src = soil.replace('deploy SoilStation to ESP32;', 'certify ISO13849;\ncertify ISO26262;\ndeploy SoilStation to ESP32;\ndeploy Ghost to ESP32;');
    const program = parseSource(src, 'x.sd');
    expect(certificationsOf(program)).toEqual(['ISO13849', 'ISO26262']);
    const proof = certificationProof(program);
    const strictErrors = proof.strict_checklist.filter((i) => i.severity === 'error').map((i) => i.message);
    expect(strictErrors).toContain('certify ISO13849 should declare a performance level (e.g. level PLd)');
    expect(strictErrors).toContain("Deploy robot 'Ghost' not found for certification proof");
    expect(proof.strict_checklist.filter((i) => i.severity === 'warning').map((i) => i.message)).toContain('certify ISO26262 should declare an ASIL level (e.g. level ASIL_B)');
    expect(proof.checklist).toContainEqual(expect.objectContaining({ severity: 'pass', message: 'Certification metadata present for deploy targets (ISO13849, ISO26262)' }));
    expect(assignmentsOf(program)).toEqual([{ robot_name: 'Ghost', hardware: 'ESP32' }, { robot_name: 'SoilStation', hardware: 'ESP32' }]);

    const normalOnly = certificationProof(parseSource(soil.replace('deploy SoilStation to ESP32;', 'certify IEC61508 { level SIL2; }\ndeploy SoilStation to ESP32;'), 'y.sd'));
    expect(normalOnly.passed).toBe(true);
    expect(normalOnly.summary).toBe('Certification proof failed with 2 error(s) and 1 warning(s)');
    const noDeploy = certificationProof(parseSource(soil.replace('deploy SoilStation to ESP32;', ''), 'z.sd'));
    expect(noDeploy).toMatchObject({ passed: true, passed_strict: true, summary: 'Certification proof passed (0 deploy targets, 0 certify blocks)' });
  });
});
