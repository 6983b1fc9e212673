import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configAgent, get, post, type ConfigAgent, agentsClosedAfterEach } from '../config-control/fixture.js';

/**
 * Operational drift (docs/operations.md § Drift): reports, scans with their alert and incident, the
 * persisted scan ring, agent drift against a real HTTP agent, and the scheduler. Acceptance checks
 * F8–F10.
 */

const { agent, stop } = agentsClosedAfterEach();
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

type Finding = { dimension: string; severity: string; message: string; path: string | null };

describe('drift reports', () => {
  it('F8: no baseline_id is a 400; no configuration is a 400 checked first; an unknown snapshot is a 400 not_found', async () => {
    const a = await agent();
    expect(await get(a, '/v1/drift', null)).toMatchObject({ status: 400, body: { error: 'missing baseline_id query parameter' } });
    expect(await get(a, '/v1/drift?baseline_id=', null)).toMatchObject({ status: 400, body: { error: 'missing baseline_id query parameter' } });
    expect(await get(a, '/v1/drift?baseline_id=cfg-42', null)).toMatchObject({ status: 400, body: { code: 'not_found' } });
    const none = await agent({ project: null });
    expect(await get(none, '/v1/drift?baseline_id=cfg-1', null)).toMatchObject({ status: 400, body: { error: 'no resolved configuration; use --config' } });
    expect(await get(none, '/v1/drift', null)).toMatchObject({ status: 400, body: { error: 'no resolved configuration; use --config' } });
  });

  it('an unchanged configuration passes; GET /v1/drift records nothing', async () => {
    const a = await agent();
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const r = await get(a, `/v1/drift?baseline_id=${snap}`, null);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      version: 'v1',
      report: { passed: true, findings: [], by_dimension: {}, dimensions_checked: ['configuration', 'firmware', 'package', 'provider', 'capability', 'policy', 'safety'] },
      agent_findings: 0,
    });
    expect((await get(a, '/v1/drift/scans', null)).body).toEqual({ version: 'v1', scans: [] });
    expect((await get(a, '/v1/alerts')).body.alerts.filter((x: { alert_type: string }) => x.alert_type === 'config_drift')).toEqual([]);
  });

  it('F9: a trust change after the snapshot is safety/high drift; the scan raises a critical config_drift alert that opens an incident', async () => {
    const a = await agent();
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, { label: 'before trust' })).body.snapshot.id;
    // cam-2 has no trust level in the snapshot; the trust route vouches for it (persisted in the device pool).
    expect((await post(a, '/v1/devices/cam-2/trust', a.keys.supervisor, {})).status).toBe(200);

    const r = await post(a, '/v1/drift/scan', a.keys.operator, {});
    expect(r.status).toBe(200);
    const findings = r.body.report.findings as Finding[];
    expect(findings).toContainEqual({ dimension: 'safety', severity: 'high', message: 'device \'cam-2\' trust_level: null -> "trusted"', path: 'devices.cam-2.trust_level' });
    expect(JSON.stringify(findings)).not.toMatch(/Some\(|None/);
    expect(r.body.scan).toMatchObject({
      baseline_id: snap,
      passed: false,
      finding_count: findings.length,
      triggered_alert: true,
      alert_deduplicated: false,
      source: 'api',
      dimensions_checked: ['configuration', 'firmware', 'package', 'provider', 'capability', 'policy', 'safety'],
    });
    expect(r.body.scan.id).toMatch(/^drift-scan-\d+$/);
    expect(r.body.scan.by_dimension.safety).toBeGreaterThanOrEqual(1);

    const alerts = (await get(a, '/v1/alerts')).body.alerts as Array<Record<string, unknown>>;
    const drift = alerts.filter((x) => x['alert_type'] === 'config_drift');
    expect(drift).toEqual([
      expect.objectContaining({
        severity: 'critical',
        source: 'drift-scan',
        id: expect.stringMatching(/^drift-\d+$/),
        message: `operational drift detected (baseline ${snap}): ${findings.length} findings across 7 dimensions`,
      }),
    ]);
    const incidents = (await get(a, '/v1/sre/incidents')).body.incidents as Array<Record<string, unknown>>;
    expect(incidents).toContainEqual(expect.objectContaining({ title: 'Alert: ConfigDrift', source_alert_id: drift[0]!['id'] }));

    // The scan ring is persisted and survives a restart.
    const file = path.join(a.stateDir, 'control-center-drift-scans.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ max_entries: 200, scans: [{ id: r.body.scan.id }] });
    await stop(a);
    const b = await agent({ stateDir: a.stateDir, keys: a.keys, project: a.project });
    expect((await get(b, '/v1/drift/scans', null)).body.scans).toEqual([r.body.scan]);
    // GET /v1/drift gives the same report without recording it.
    const again = await get(b, `/v1/drift?baseline_id=${snap}`, null);
    expect(again.body.report.findings).toEqual(findings);
    expect((await get(b, '/v1/drift/scans', null)).body.scans).toHaveLength(1);
  });

  it('F10: a scan with no snapshot is a 400; an explicit or configured baseline is used before the newest', async () => {
    const a = await agent();
    expect(await post(a, '/v1/drift/scan', a.keys.operator, {})).toMatchObject({ status: 400, body: { error: 'no configuration snapshots; save one via POST /v1/config/snapshots' } });
    expect((await post(a, '/v1/drift/scan', a.keys.operator, '{bad')).status).toBe(400);
    const s1 = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const s2 = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    expect((await post(a, '/v1/drift/scan', a.keys.operator, { baseline_id: '  ' })).body.scan.baseline_id).toBe(s2);
    expect((await post(a, '/v1/drift/scan', a.keys.operator, { baseline_id: s1 })).body.scan).toMatchObject({ baseline_id: s1, passed: true, triggered_alert: false });
    expect((await post(a, '/v1/drift/scan', a.keys.operator, { baseline_id: 'cfg-9' })).body.code).toBe('not_found');
    const b = await agent({ env: { SVC_DRIFT_SCAN_BASELINE_ID: 'cfg-77' } });
    expect((await post(b, '/v1/config/snapshots', b.keys.developer, {})).status).toBe(200);
    expect((await post(b, '/v1/drift/scan', b.keys.operator, {})).body).toMatchObject({ code: 'not_found' });
  });

  it('an edited fragment is configuration and policy drift, with plain values in the messages; a second identical warning is deduplicated', async () => {
    const a = await agent();
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    await stop(a);
    const root = a.project.root;
    fs.writeFileSync(path.join(root, 'svc.assurance.toml'), '[assurance]\nminimum_score = 85\n[mission]\nrequired_capabilities = ["navigation"]\n');
    fs.writeFileSync(path.join(root, 'svc.fleet.toml'), fs.readFileSync(path.join(root, 'svc.fleet.toml'), 'utf8').replace('id = "orchard"', 'id = "orchard-2"').replace('nav-stack = "1.2.0"', 'vision = "2.0.0"'));
    const b = await agent({ stateDir: a.stateDir, keys: a.keys, project: a.project });
    const r = await get(b, `/v1/drift?baseline_id=${snap}`, null);
    const findings = r.body.report.findings as Finding[];
    expect(findings).toEqual(
      expect.arrayContaining([
        { dimension: 'configuration', severity: 'medium', message: '~ assurance.minimum_score: 70 -> 85', path: null },
        { dimension: 'configuration', severity: 'medium', message: '+ mission', path: null },
        { dimension: 'configuration', severity: 'medium', message: '~ fleet.id: "orchard" -> "orchard-2"', path: null },
        { dimension: 'configuration', severity: 'medium', message: '- dependencies.nav-stack', path: null },
        { dimension: 'configuration', severity: 'medium', message: '+ dependencies.vision', path: null },
        { dimension: 'fleet', severity: 'high', message: 'fleet.id changed: "orchard" -> "orchard-2"', path: 'fleet.id' },
        { dimension: 'package', severity: 'high', message: "removed package 'nav-stack'", path: 'nav-stack' },
        { dimension: 'package', severity: 'medium', message: "added package 'vision'", path: 'vision' },
        { dimension: 'policy', severity: 'high', message: 'assurance.minimum_score changed: 70 -> 85', path: 'assurance.minimum_score' },
        { dimension: 'policy', severity: 'medium', message: 'mission required_capabilities changed', path: 'mission.required_capabilities' },
      ]),
    );
    // Check order: the raw tree diff first, then fleet, packages, policy.
    const dims = findings.map((f) => f.dimension);
    expect(dims.indexOf('configuration')).toBe(0);
    expect(dims.lastIndexOf('configuration')).toBeLessThan(dims.indexOf('fleet'));
    expect(dims.indexOf('package')).toBeLessThan(dims.indexOf('policy'));
    expect(r.body.report.by_dimension).toEqual({ configuration: 6, package: 2, policy: 2 });
    expect(Object.keys(r.body.report.by_dimension)).toEqual([...Object.keys(r.body.report.by_dimension)].sort());
  });

  it('warning severity when no finding is high; the pipeline deduplicates an identical warning (alert_deduplicated)', async () => {
    const a = await agent();
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    await stop(a);
    fs.appendFileSync(path.join(a.project.root, 'svc.assurance.toml'), 'require_recovery = false\n');
    const b = await agent({ stateDir: a.stateDir, keys: a.keys, project: a.project });
    const first = await post(b, '/v1/drift/scan', b.keys.operator, { baseline_id: snap });
    expect(first.body.report.findings).toEqual([{ dimension: 'configuration', severity: 'medium', message: '+ assurance.require_recovery', path: null }]);
    expect(first.body.scan).toMatchObject({ passed: false, triggered_alert: true, alert_deduplicated: false });
    const second = await post(b, '/v1/drift/scan', b.keys.operator, { baseline_id: snap });
    expect(second.body.scan).toMatchObject({ passed: false, triggered_alert: true, alert_deduplicated: true });
    const alerts = (await get(b, '/v1/alerts')).body.alerts.filter((x: { alert_type: string }) => x.alert_type === 'config_drift');
    expect(alerts).toEqual([expect.objectContaining({ severity: 'warning' })]);
    // A warning opens no incident.
    expect((await get(b, '/v1/sre/incidents')).body.incidents.filter((i: { title: string }) => i.title === 'Alert: ConfigDrift')).toEqual([]);
  });
});

/** A deploy agent on loopback answering `GET /v1/status` with `status`, recording the bearer tokens it saw. */
async function statusAgent(status: Record<string, unknown>): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    if (req.url !== '/v1/status') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(status));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('agent drift', () => {
  it('a deploy agent running another program is program/critical drift; its healthy, matching twin is not', async () => {
    const stateDir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'svc-drift-agents-'));
    const a = await agent({ withProgram: true, stateDir });
    const expectedHash = createHash('sha256').update(fs.readFileSync(a.project.programPath)).digest('hex');
    const wrong = await statusAgent({ ok: true, target: 'Rover@RoverV2', healthy: true, program_hash: 'f'.repeat(64), hardware_profile: 'RoverV2', firmware_version: '1.4.0', packages: ['nav-stack'] });
    fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: 'Rover@RoverV2', url: wrong.url, token: 'agent-secret' }] }));
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;

    const r = await get(a, `/v1/drift?baseline_id=${snap}`, null);
    expect(r.status).toBe(200);
    expect(r.body.agent_findings).toBe(1);
    expect(r.body.report.findings).toEqual([
      { dimension: 'program', severity: 'critical', message: `agent 'Rover@RoverV2' program hash: expected "${expectedHash}", actual "${'f'.repeat(64)}"`, path: 'agents.Rover@RoverV2.program_hash' },
    ]);
    expect(r.body.report.by_dimension).toEqual({ capability: 1 });
    expect(wrong.seen).toEqual(['GET /v1/status Bearer agent-secret']);

    const scan = await post(a, '/v1/drift/scan', a.keys.operator, {});
    expect(scan.body.scan).toMatchObject({ passed: false, triggered_alert: true });
    expect((await get(a, '/v1/alerts')).body.alerts).toContainEqual(expect.objectContaining({ alert_type: 'config_drift', severity: 'critical' }));

    // The same agent reporting the right program, hardware and firmware: no finding. An unhealthy,
    // compromised one on other hardware is.
    const good = await statusAgent({ healthy: true, program_hash: expectedHash, hardware_profile: 'RoverV2', firmware_version: '1.4.0', packages: ['nav-stack'] });
    fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: 'Rover@RoverV2', url: good.url }] }));
    expect((await get(a, `/v1/drift?baseline_id=${snap}`, null)).body).toMatchObject({ agent_findings: 0, report: { passed: true, findings: [] } });

    const bad = await statusAgent({ healthy: false, program_hash: expectedHash, hardware_profile: 'JetsonNano', firmware_version: '0.9.0', packages: ['nav-stack', 'miner'], boot_state: 'tampered' });
    fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: 'Rover@RoverV2', url: bad.url }] }));
    const worse = (await get(a, `/v1/drift?baseline_id=${snap}`, null)).body.report.findings as Finding[];
    expect(worse.map((f) => [f.dimension, f.severity, f.path])).toEqual([
      ['hardware', 'high', 'agents.Rover@RoverV2.healthy'],
      ['hardware', 'high', 'agents.Rover@RoverV2.hardware_profile'],
      ['firmware', 'high', 'agents.Rover@RoverV2.firmware_version'],
      ['package', 'medium', 'agents.Rover@RoverV2.package.miner'],
      ['safety', 'critical', 'agents.Rover@RoverV2.boot_state'],
    ]);
  });

  it('a fleet agent stands in when no deploy agent is registered; an unreachable agent contributes nothing', async () => {
    const a = await agent({ withProgram: true });
    const fleet = await statusAgent({ robot_name: 'Rover', healthy: true });
    fs.writeFileSync(path.join(a.stateDir, 'fleet-agents.json'), JSON.stringify({ agents: [{ robot_name: 'Rover', url: fleet.url }] }));
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const r = await get(a, `/v1/drift?baseline_id=${snap}`, null);
    expect(r.body.report.findings.map((f: Finding) => [f.dimension, f.severity, f.path])).toEqual([
      ['hardware', 'medium', 'agents.Rover@RoverV2.hardware_profile'],
      ['program', 'high', 'agents.Rover@RoverV2.program_hash'],
      ['firmware', 'medium', 'agents.Rover@RoverV2.firmware_version'],
    ]);
    expect(fleet.seen).toEqual(['GET /v1/status ']);

    const closed = http.createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((res) => closed.close(res));
    fs.writeFileSync(path.join(a.stateDir, 'fleet-agents.json'), JSON.stringify({ agents: [{ robot_name: 'Rover', url: `http://127.0.0.1:${port}` }] }));
    expect((await get(a, `/v1/drift?baseline_id=${snap}`, null)).body).toMatchObject({ agent_findings: 0, report: { passed: true } });
  });
});

describe('drift scheduler', () => {
  it('SVC_DRIFT_SCAN_INTERVAL_SECS records scheduled scans against the newest snapshot and stops with the agent', async () => {
    const a = await agent({ env: { SVC_DRIFT_SCAN_INTERVAL_SECS: '1' } });
    // Before a snapshot exists a tick is skipped without a record.
    await new Promise((r) => setTimeout(r, 1300));
    expect((await get(a, '/v1/drift/scans', null)).body.scans).toEqual([]);
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    expect((await post(a, '/v1/devices/cam-2/trust', a.keys.supervisor, {})).status).toBe(200);
    const deadline = Date.now() + 5000;
    let scans: Array<Record<string, unknown>> = [];
    while (Date.now() < deadline) {
      scans = (await get(a, '/v1/drift/scans', null)).body.scans;
      if (scans.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(scans[0]).toMatchObject({ source: 'scheduled', baseline_id: snap, passed: false, triggered_alert: true });
    expect((await get(a, '/v1/alerts')).body.alerts).toContainEqual(expect.objectContaining({ alert_type: 'config_drift', severity: 'critical' }));
    await stop(a);
    const count = JSON.parse(fs.readFileSync(path.join(a.stateDir, 'control-center-drift-scans.json'), 'utf8')).scans.length;
    await new Promise((r) => setTimeout(r, 1300));
    expect(JSON.parse(fs.readFileSync(path.join(a.stateDir, 'control-center-drift-scans.json'), 'utf8')).scans.length).toBe(count);
  });
});

describe('drift access, ring and gRPC', () => {
  it('the sensitive reads need a principal under SVC_API_REQUIRE_AUTH_READS; any role may read', async () => {
    const a = await agent({ env: { SVC_API_REQUIRE_AUTH_READS: '1' } });
    for (const p of ['/v1/config/snapshots', '/v1/config/approvals', '/v1/config/history', '/v1/drift/scans', '/v1/drift?baseline_id=cfg-1']) {
      expect((await get(a, p, null)).status, p).toBe(401);
      expect((await get(a, p, a.keys.auditor)).status, p).not.toBe(401);
    }
    expect((await get(a, '/v1/drift/scans', a.keys.auditor)).status).toBe(200);
  });

  it('the scan ring keeps the newest 200', async () => {
    const stateDir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'svc-drift-ring-'));
    const old = Array.from({ length: 200 }, (_, i) => ({ id: `drift-scan-${1000 + i}`, scanned_at_ms: 1000 + i, baseline_id: 'cfg-1', passed: true, finding_count: 0, dimensions_checked: [], by_dimension: {}, triggered_alert: false, alert_deduplicated: false, source: 'api' }));
    fs.writeFileSync(path.join(stateDir, 'control-center-drift-scans.json'), JSON.stringify({ scans: old, max_entries: 200 }));
    const a = await agent({ stateDir });
    await post(a, '/v1/config/snapshots', a.keys.developer, {});
    const r = await post(a, '/v1/drift/scan', a.keys.operator, {});
    const scans = (await get(a, '/v1/drift/scans', null)).body.scans;
    expect(scans).toHaveLength(200);
    expect(scans[0].id).toBe('drift-scan-1001');
    expect(scans[199]).toEqual(r.body.scan);
  });

  it('DetectDrift over gRPC carries baseline_id and answers the REST body', async () => {
    const { connectGrpc, bearer } = await import('../helpers/grpc-client.js');
    const a = await agent({ grpc: true });
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const g = connectGrpc(a.agent.grpcAddress!);
    try {
      const res = await g.client['DetectDrift']!({ baseline_id: snap }, { metadata: bearer(a.keys.auditor) });
      expect(JSON.parse(res.json)).toEqual((await get(a, `/v1/drift?baseline_id=${snap}`, null)).body);
      await expect(g.client['DetectDrift']!({ baseline_id: '' }, { metadata: bearer(a.keys.auditor) })).rejects.toThrow(/missing baseline_id query parameter/);
    } finally {
      g.close();
    }
  });
});
