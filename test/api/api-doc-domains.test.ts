import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';

/**
 * docs/api.md lists every domain of the contract (every `group` of SPECS) under a `### \`group\``
 * heading with at least one curl example (docs/api.md § Domains: one example each). A domain added
 * without its subsection fails here.
 */
const DOC = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'api.md'), 'utf8');

/** The text under each `### \`name\`` heading, up to the next heading. */
function domainSections(markdown: string): Map<string, string> {
  const sections = new Map<string, string>();
  const lines = markdown.split('\n');
  let current: string | null = null;
  let inFence = false;
  for (const line of lines) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = !inFence && /^#{1,6} /.test(line);
    if (heading) {
      const m = /^### `([^`]+)`\s*$/.exec(line);
      current = m ? m[1]! : null;
      if (current) sections.set(current, '');
      continue;
    }
    if (current) sections.set(current, sections.get(current)! + line + '\n');
  }
  return sections;
}

const GROUPS = [...new Set(SPECS.map((s) => s.group))].sort();
const SECTIONS = domainSections(DOC);

describe('docs/api.md covers every domain', () => {
  it('finds the domains of the contract', () => expect(GROUPS.length).toBeGreaterThan(20));

  it.each(GROUPS)('%s has a subsection with a curl example of one of its routes', (group) => {
    const section = SECTIONS.get(group);
    expect(section, `docs/api.md has no "### \`${group}\`" subsection (§ Domains: one example each)`).toBeDefined();
    expect(section!, `the "${group}" subsection has no curl example`).toMatch(/```sh[\s\S]*curl [\s\S]*```/);
    // The example calls a route of that domain.
    const paths = SPECS.filter((s) => s.group === group).map((s) => new RegExp(s.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/?\\s\'"]+') + '(?![A-Za-z0-9/_-])'));
    expect(paths.some((re) => re.test(section!)), `the "${group}" example calls none of its routes`).toBe(true);
  });

  it('names no domain the contract does not have (in § Domains: one example each)', () => {
    const start = DOC.indexOf('\n## Domains: one example each');
    expect(start).toBeGreaterThan(0);
    const rest = DOC.slice(start + 1);
    const end = rest.search(/\n## /);
    const unknown = [...domainSections(end < 0 ? rest : rest.slice(0, end)).keys()].filter((g) => !GROUPS.includes(g));
    expect(unknown).toEqual([]);
  });
});
