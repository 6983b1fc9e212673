import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { auth, DEPLOY_KEY, OPERATOR_KEY, reportsProject, startReportsAgent } from './fixture.js';

/** RFC 4180 parser: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  expect(field).toBe('');
  expect(row).toEqual([]);
  return rows;
}

describe('GET /v1/reports/export', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    // Twelve robots: the lifecycle table alone spans more than one page.
    a = await startReportsAgent(reportsProject({ robots: 12 }));
  });
  afterAll(() => a.close());

  const exp = (query: string, key = DEPLOY_KEY) => a.json(`/v1/reports/export${query}`, auth(key));

  it('needs a credential (401) with the Deploy action (403)', async () => {
    const anon = await a.json('/v1/reports/export');
    expect(anon.status).toBe(401);
    const op = await exp('', OPERATOR_KEY);
    expect(op.status).toBe(403);
    expect(op.body.code).toBe('forbidden');
  });

  it('F26: PDF 1.4 in base64, several pages rendered by pdftoppm', async () => {
    const r = await exp('?format=pdf');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', program: 'fleet.sd', profile: 'defense', format: 'pdf', mime: 'application/pdf' });
    expect(r.body.body_base64).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const pdf = Buffer.from(r.body.body_base64, 'base64');
    expect(pdf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');
    expect(pdf.subarray(-5).toString('latin1')).toBe('%%EOF');
    const dir = tempDir('svc-report-pdf-');
    const file = path.join(dir, 'report.pdf');
    fs.writeFileSync(file, pdf);
    execFileSync('pdftoppm', ['-png', '-r', '20', file, path.join(dir, 'page')]);
    const pages = fs.readdirSync(dir).filter((f) => f.startsWith('page') && f.endsWith('.png'));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    // Text of the tables, with page footers (pdftotext comes with pdftoppm in poppler-utils).
    const text = execFileSync('pdftotext', ['-layout', file, '-']).toString('utf8');
    expect(text).toContain('Svc executive report');
    expect(text).toMatch(/Category\s+Score\s+Weight\s+Weighted\s+Detail/);
    expect(text).toMatch(/Evidence\s+Label\s+Status\s+Detail/);
    expect(text).toMatch(/Requirement\s+Severity\s+Message/);
    expect(text).toContain('Lifecycle summary');
    expect(text).toContain(`Page ${pages.length} of ${pages.length}`);
    // The lifecycle table repeats its header on the page it continues on.
    expect((text.match(/Node\s+Label\s+Kind\s+Phase/g) ?? []).length).toBeGreaterThanOrEqual(2);
    expect(text).toContain('robot:scout12');
  });

  it('F27: an unknown profile is a 400 naming it', async () => {
    const r = await exp('?profile=nope');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("Unknown compliance profile 'nope'");
  });

  it('Markdown by default (and for unknown formats) in the documented layout', async () => {
    const r = await exp('');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', program: 'fleet.sd', profile: 'defense', format: 'markdown' });
    const lines: string[] = r.body.body.split('\n');
    expect(lines.slice(0, 5)).toEqual(['# Svc executive report — fleet.sd', '', '## Compliance (defense)', '', '# Compliance accreditation export — defense']);
    expect(lines).toContain('**Status:** template_only');
    expect(lines.find((l) => l.startsWith('**Generated:** '))).toMatch(/^\*\*Generated:\*\* \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(lines).toContain('> Template profile only — not legal accreditation or certification.');
    expect(lines).toContain('**Evaluation:** FAIL');
    expect(lines).toContain('- [x] **Kill switch** — requirement satisfied (ok)');
    expect(lines).toContain('- [ ] **Assurance case** — requirement not satisfied (gap)');
    expect(lines).toContain('- [Error] requires_assurance_case — No assurance_case declared');
    const json = (await exp('?format=json')).body;
    expect(lines.slice(-7)).toEqual([
      '## Scorecard',
      '',
      `Overall: ${json.scorecard.overall_score}/100`,
      '',
      '## Digital thread',
      '',
      expect.stringMatching(/^Nodes: \d+, edges: \d+$/),
    ]);
    const odd = await exp('?format=docx&profile=%20Machinery%20');
    expect(odd.body.format).toBe('markdown');
    expect(odd.body.profile).toBe('iso13849');
  });

  it('JSON: accreditation, scorecard and thread summary (RFC 3339 time, template_only kept)', async () => {
    const r = await exp('?format=json&profile=research');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['accreditation', 'digital_thread_summary', 'profile', 'program', 'scorecard', 'version']);
    const acc = r.body.accreditation;
    expect(acc.accreditation_status).toBe('template_only');
    expect(acc.template_notice).toBe('Template profile only — not legal accreditation or certification.');
    expect(new Date(acc.generated_at).getTime()).toBe(acc.generated_at_ms);
    expect(acc.generated_at).toBe(new Date(acc.generated_at_ms).toISOString());
    expect(acc.audit_export_id).toMatch(/^[0-9a-f]{16}$/);
    // research is warn-only: violations are warnings and it passes.
    expect(acc.passed).toBe(true);
    expect(acc.evaluation.violations.every((v: any) => v.severity === 'warning')).toBe(true);
    expect(acc.evidence_checklist.map((e: any) => e.id)).toEqual(['readiness', 'tamper_policy', 'secure_boot', 'template_notice']);
    expect(r.body.scorecard.categories).toHaveLength(7);
    expect(r.body.digital_thread_summary[0]).toBe('Digital thread query: {"capability":null,"device_id":null,"node_id":null,"lifecycle_phase":null,"phase_path":null}');
    // Same results → same audit export id.
    const again = await exp('?format=json&profile=research');
    expect(again.body.accreditation.audit_export_id).toBe(acc.audit_export_id);
  });

  it('CSV: one section,key,value,detail table with RFC 4180 quoting', async () => {
    const r = await exp('?format=csv&profile=warehouse');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ format: 'csv', mime: 'text/csv', profile: 'warehouse' });
    const rows = parseCsv(r.body.body);
    expect(rows[0]).toEqual(['section', 'key', 'value', 'detail']);
    for (const row of rows) expect(row).toHaveLength(4);
    const get = (section: string, key: string) => rows.find((x) => x[0] === section && x[1] === key);
    expect(get('report', 'program')?.[2]).toBe('fleet.sd');
    expect(get('accreditation', 'status')?.[2]).toBe('template_only');
    // A detail with a comma was quoted and comes back whole.
    expect(get('checklist', 'secure_boot')?.[3]).toBe('0/100 score, 0 contracts');
    const json = (await exp('?format=json&profile=warehouse')).body;
    for (const c of json.scorecard.categories) {
      const row = get('scorecard', c.name)!;
      expect(Number(row[2])).toBe(c.score);
      expect(row[3]).toBe(`weight=${c.weight} weighted=${c.weighted}; ${c.detail}`);
    }
    expect(Number(get('scorecard', 'overall_score')![2])).toBe(json.scorecard.overall_score);
    expect(rows.filter((x) => x[0] === 'checklist').map((x) => x[1])).toEqual(json.accreditation.evidence_checklist.map((e: any) => e.id));
  });

  it('needs a program', async () => {
    const p = reportsProject();
    const bare = await startReportsAgent(p, { program: null });
    try {
      const r = await bare.json('/v1/reports/export', auth(DEPLOY_KEY));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('no program loaded; use control-center serve --program <file.sd>');
    } finally {
      await bare.close();
    }
  });
});
