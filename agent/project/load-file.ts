/**
 * Reading one configuration file (root manifest, layer or fragment).
 * `.json` files are parsed as JSON, everything else as TOML.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';

import { ConfigError, type ConfigErrorCode } from './config-error.js';
import { isTable, type Table } from './deep-merge.js';

export interface LoadOptions {
  /** Error code used when the file does not exist. */
  missingCode?: ConfigErrorCode;
  /** Short description used in messages, e.g. "layer" or "fragment \"health\"". */
  role?: string;
}

export function loadConfigFile(file: string, options: LoadOptions = {}): Table {
  const role = options.role ?? 'configuration file';
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ConfigError(options.missingCode ?? 'config_not_found', `${role} not found: ${file}`, file, { cause: err });
    }
    throw new ConfigError('config_invalid', `cannot read ${role} ${file}: ${(err as Error).message}`, file, { cause: err });
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return path.extname(file).toLowerCase() === '.json' ? parseJson(text, file, role) : parseTomlText(text, file, role);
}

function parseTomlText(text: string, file: string, role: string): Table {
  try {
    return parseToml(text) as Table;
  } catch (err) {
    if (err instanceof TomlError) {
      const reason = firstLine(err.message.replace(/^Invalid TOML document:\s*/, ''));
      throw new ConfigError(
        'config_parse_error',
        `TOML syntax error in ${role} ${file} at line ${err.line}, column ${err.column}: ${reason}`,
        file,
        { line: err.line, column: err.column, cause: err },
      );
    }
    throw new ConfigError('config_parse_error', `cannot parse ${role} ${file}: ${(err as Error).message}`, file, { cause: err });
  }
}

function parseJson(text: string, file: string, role: string): Table {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const reason = firstLine((err as Error).message);
    const where = jsonErrorLocation(text, reason);
    const at = where ? ` at line ${where.line}, column ${where.column}` : '';
    throw new ConfigError('config_parse_error', `JSON syntax error in ${role} ${file}${at}: ${reason}`, file, {
      line: where?.line ?? null,
      column: where?.column ?? null,
      cause: err,
    });
  }
  if (!isTable(value)) {
    throw new ConfigError('config_invalid', `${role} ${file} must contain a JSON object at the top level`, file);
  }
  return value;
}

function firstLine(message: string): string {
  return (message.split('\n')[0] ?? '').trim();
}

/** Best-effort line/column from V8's JSON error messages (format varies by version). */
function jsonErrorLocation(text: string, message: string): { line: number; column: number } | null {
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return { line: Number(lineCol[1]), column: Number(lineCol[2]) };
  const pos = /at position (\d+)/.exec(message);
  if (pos) {
    const offset = Math.min(Number(pos[1]), text.length);
    const before = text.slice(0, offset).split('\n');
    return { line: before.length, column: (before[before.length - 1] ?? '').length + 1 };
  }
  if (/Unexpected end of JSON input/.test(message)) {
    const lines = text.split('\n');
    return { line: lines.length, column: (lines[lines.length - 1] ?? '').length + 1 };
  }
  return null;
}
