import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * The governance calls of the official clients against the demo project, as they make them
 * (docs/governance.md): `getGovernance` without a credential, the governance and compliance reads
 * with a key of a role that holds Operate, and the exports with Deploy. Each succeeds.
 */
const REPO = path.resolve(__dirname, '../..');
const OPERATOR = 'e1'.repeat(32);
const DEVELOPER = 'e2'.repeat(32);
let a: RunningAgent;

beforeAll(async () => {
  const root = tempDir('svc-gov-clients-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'ops', token: OPERATOR, role: 'operator' },
      { key_id: 'dev', token: DEVELOPER, role: 'developer' },
    ]),
  );
  a = await startAgent({ configPath: path.join(root, 'svc.toml'), programPath: path.join(root, 'programs', 'patrol.sd'), env: { SVC_API_KEYS_FILE: keys } });
});
afterAll(async () => {
  await a?.close();
});

const headers = (token: string) => ({ 'content-type': 'application/json', Authorization: `Bearer ${token}` });

describe('official client governance calls on the demo project', () => {
  it('getGovernance (anonymous) and the Operate reads answer 200', async () => {
    expect((await a.json('/v1/governance')).status).toBe(200);
    for (const p of ['/v1/compliance', '/v1/certifications', '/v1/risk', '/v1/governance/policies', '/v1/governance/audit', '/v1/governance/accountability', '/v1/certifications/report']) {
      const r = await a.json(p, { headers: headers(OPERATOR) });
      expect(r.status, p).toBe(200);
      expect(r.body.version, p).toBe('v1');
    }
    for (const p of ['/v1/governance/validate', '/v1/compliance/check']) {
      const r = await a.json(p, { method: 'POST', headers: headers(OPERATOR), body: '{}' });
      expect(r.status, p).toBe(200);
      expect(typeof r.body.text).toBe('string');
    }
    // The demo declares no [governance]: nothing is governed, validation reports the missing section.
    const v = await a.json('/v1/governance/validate', { method: 'POST', headers: headers(OPERATOR), body: '' });
    expect(v.body.validation.findings.map((f: { code: string }) => f.code)).toEqual(['GOV_NO_PROFILE', 'GOV_NO_MATURITY']);
    expect(v.body.compliance.summary.entities_checked).toBe(0);
  });

  it('compliance profiles, export of patrol.sd for every profile, and the evidence log', async () => {
    const profiles = (await a.json('/v1/compliance/profiles')).body.profiles as string[];
    for (const profile of profiles) {
      const r = await a.json(`/v1/compliance/export?profile=${profile}`, { headers: headers(DEVELOPER) });
      expect(r.status, profile).toBe(200);
      expect(r.body.export).toMatchObject({ profile, program: 'patrol.sd', accreditation_status: 'template_only' });
    }
    const ev = await a.json('/v1/compliance/evidence', { headers: headers(DEVELOPER) });
    expect(ev.body.evidence.map((e: { profile: string }) => e.profile)).toEqual(profiles);
  });
});
