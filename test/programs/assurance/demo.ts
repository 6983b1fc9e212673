/** The bundled demo project (demo/svc.toml + demo/programs/patrol.sd), parsed with the real parser. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseProgram } from '../../../agent/programs/language/index.js';
import type { Program } from '../../../agent/programs/language/ast.js';
import { resolveProjectConfig, type ResolvedConfig } from '../../../agent/project/resolve-config.js';

export const DEMO_DIR = path.resolve(import.meta.dirname, '../../../demo');
export const PATROL_FILE = path.join(DEMO_DIR, 'programs', 'patrol.sd');

export function parseFile(file: string): Program {
  return parseProgram(fs.readFileSync(file, 'utf8'), file);
}

export function patrol(): Program {
  return parseFile(PATROL_FILE);
}

export function demoConfig(): ResolvedConfig {
  return resolveProjectConfig(path.join(DEMO_DIR, 'svc.toml'));
}
