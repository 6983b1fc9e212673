/**
 * The executive report as a PDF 1.4 document (docs/operations.md § Reports, "PDF"): a title, one
 * section per report part, real tables (header row repeated on every page a table spans), page
 * breaks where the content needs them and "Page n of N" footers. pdfkit is loaded by a dynamic
 * import on the first PDF export, so an agent that never renders one never loads it.
 */
import type { ExecutiveReport } from './report-export.js';

type Doc = PDFKit.PDFDocument;

interface Column {
  header: string;
  width: number;
  /** Right-aligned numbers. */
  numeric?: boolean;
}

const MARGIN = 50;
const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const CELL_PAD = 4;

/** The standard 14 fonts only encode WinAnsi: arrows and other symbols become ASCII. */
function pdfText(value: unknown): string {
  return String(value ?? '')
    .replace(/→/g, '->')
    .replace(/[\u0000-\u0008\u000b-\u001f]/g, '')
    .replace(/[^\u0009\u000a\u0020-\u00ff\u2013\u2014\u2018\u2019\u201c\u201d\u2022\u2026]/g, '?');
}

const bottom = (doc: Doc): number => doc.page.height - doc.page.margins.bottom;

function heading(doc: Doc, text: string, size = 14): void {
  // Keep a heading with the first lines of what follows it.
  if (doc.y + size * 3 + 60 > bottom(doc)) doc.addPage();
  doc.moveDown(0.6).font(BOLD).fontSize(size).fillColor('black').text(pdfText(text), MARGIN, doc.y);
  doc.moveDown(0.3).font(FONT).fontSize(10);
}

function paragraph(doc: Doc, text: string): void {
  doc.font(FONT).fontSize(10).fillColor('black').text(pdfText(text), MARGIN, doc.y, { width: doc.page.width - 2 * MARGIN });
}

function rowHeight(doc: Doc, cells: string[], columns: readonly Column[], font: string): number {
  doc.font(font).fontSize(9);
  return Math.max(...cells.map((c, i) => doc.heightOfString(c, { width: columns[i]!.width - 2 * CELL_PAD }))) + 2 * CELL_PAD;
}

function drawRow(doc: Doc, cells: string[], columns: readonly Column[], y: number, h: number, header: boolean): void {
  let x = MARGIN;
  const total = columns.reduce((s, c) => s + c.width, 0);
  if (header) doc.save().rect(MARGIN, y, total, h).fill('#e4e8ee').restore();
  doc.font(header ? BOLD : FONT).fontSize(9).fillColor('black');
  columns.forEach((col, i) => {
    doc.text(cells[i]!, x + CELL_PAD, y + CELL_PAD, { width: col.width - 2 * CELL_PAD, align: col.numeric && !header ? 'right' : 'left', lineBreak: true });
    doc.save().lineWidth(0.5).strokeColor('#8a94a3').rect(x, y, col.width, h).stroke().restore();
    x += col.width;
  });
}

/** A table that breaks across pages, repeating its header row at the top of each new page. */
function table(doc: Doc, columns: readonly Column[], rows: readonly unknown[][]): void {
  const headers = columns.map((c) => pdfText(c.header));
  const headerH = rowHeight(doc, headers, columns, BOLD);
  let y = doc.y + 4;
  if (y + headerH * 2 > bottom(doc)) {
    doc.addPage();
    y = doc.page.margins.top;
  }
  drawRow(doc, headers, columns, y, headerH, true);
  y += headerH;
  for (const raw of rows) {
    const cells = raw.map(pdfText);
    const h = rowHeight(doc, cells, columns, FONT);
    if (y + h > bottom(doc)) {
      doc.addPage();
      y = doc.page.margins.top;
      drawRow(doc, headers, columns, y, headerH, true);
      y += headerH;
    }
    drawRow(doc, cells, columns, y, h, false);
    y += h;
  }
  doc.x = MARGIN;
  doc.y = y + 6;
}

export async function reportPdf(r: ExecutiveReport): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const a = r.accreditation;
  const doc = new PDFDocument({
    pdfVersion: '1.4',
    size: 'LETTER',
    margins: { top: MARGIN, bottom: MARGIN + 20, left: MARGIN, right: MARGIN },
    bufferPages: true,
    info: { Title: pdfText(`Svc executive report — ${r.program}`), Author: 'svc-control-center', Subject: `Compliance profile ${r.profile}`, CreationDate: new Date(a.generated_at_ms) },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    // pdfkit ends with `%%EOF\n`; the file ends at the marker itself (an EOL after it is optional),
    // so strict `endsWith('%%EOF')` checks of clients hold.
    doc.on('end', () => {
      const pdf = Buffer.concat(chunks);
      let end = pdf.length;
      while (end > 0 && (pdf[end - 1] === 0x0a || pdf[end - 1] === 0x0d)) end--;
      resolve(pdf.subarray(0, end));
    });
    doc.on('error', reject);
  });

  doc.font(BOLD).fontSize(18).text(pdfText(`Svc executive report — ${r.program}`), MARGIN, MARGIN);
  doc.font(FONT).fontSize(10).fillColor('#333333').text(pdfText(`Profile ${r.profile} · generated ${a.generated_at}`)).fillColor('black');

  heading(doc, `Compliance (${r.profile})`);
  paragraph(doc, a.description);
  paragraph(doc, `Status: ${a.accreditation_status}   Audit export ID: ${a.audit_export_id}   Evaluation: ${a.passed ? 'PASS' : 'FAIL'}`);
  paragraph(doc, a.template_notice);
  heading(doc, 'Evidence checklist', 12);
  table(doc, [{ header: 'Evidence', width: 110 }, { header: 'Label', width: 120 }, { header: 'Status', width: 50 }, { header: 'Detail', width: 232 }],
    a.evidence_checklist.map((e) => [e.id, e.label, e.status, e.detail]));
  heading(doc, 'Violations', 12);
  if (a.evaluation.violations.length === 0) paragraph(doc, 'No violations.');
  else table(doc, [{ header: 'Requirement', width: 140 }, { header: 'Severity', width: 60 }, { header: 'Message', width: 312 }], a.evaluation.violations.map((v) => [v.requirement, v.severity, v.message]));

  heading(doc, 'Scorecard');
  paragraph(doc, `Overall: ${r.scorecard.overall_score}/100 (${r.scorecard.tier})`);
  table(
    doc,
    [{ header: 'Category', width: 80 }, { header: 'Score', width: 45, numeric: true }, { header: 'Weight', width: 45, numeric: true }, { header: 'Weighted', width: 55, numeric: true }, { header: 'Detail', width: 287 }],
    r.scorecard.categories.map((c) => [c.name, c.score, c.weight, c.weighted, c.detail]),
  );
  if (r.scorecard.recommendations.length > 0) {
    heading(doc, 'Recommendations', 12);
    table(doc, [{ header: '#', width: 30, numeric: true }, { header: 'Recommendation', width: 482 }], r.scorecard.recommendations.map((t, i) => [i + 1, t]));
  }

  const t = r.thread;
  heading(doc, 'Digital thread');
  table(doc, [{ header: 'Measure', width: 200 }, { header: 'Count', width: 80, numeric: true }], [
    ['Nodes', t.matched_node_count],
    ['Edges', t.matched_edge_count],
    ['Lifecycle edges', t.lifecycle_edges.length],
    ['Device links', t.device_links.length],
  ]);
  heading(doc, 'Lifecycle summary', 12);
  table(doc, [{ header: 'Phase', width: 200 }, { header: 'Nodes', width: 80, numeric: true }], Object.entries(t.lifecycle_summary).map(([p, n]) => [p, n]));
  heading(doc, 'Lifecycle rows', 12);
  table(doc, [{ header: 'Node', width: 232 }, { header: 'Label', width: 140 }, { header: 'Kind', width: 70 }, { header: 'Phase', width: 70 }], t.lifecycle_rows.map((row) => [row.node_id, row.label, row.kind, row.phase]));
  if (t.device_links.length > 0) {
    heading(doc, 'Devices', 12);
    table(
      doc,
      [{ header: 'Device', width: 110 }, { header: 'Type', width: 80 }, { header: 'Robot', width: 90 }, { header: 'Lifecycle', width: 70 }, { header: 'Related capabilities', width: 162 }],
      t.device_links.map((d) => [d.device_id, d.device_type, d.assigned_robot ?? '', d.lifecycle_state, d.related_capabilities.join(', ')]),
    );
  }

  // Footers: every page is buffered, so the total is known.
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const bottomMargin = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.font(FONT).fontSize(8).fillColor('#555555').text(`Page ${i + 1 - range.start} of ${range.count}`, MARGIN, doc.page.height - MARGIN, {
      width: doc.page.width - 2 * MARGIN,
      align: 'center',
      lineBreak: false,
    });
    doc.page.margins.bottom = bottomMargin;
  }
  doc.end();
  return done;
}
