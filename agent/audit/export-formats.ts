import type { AuditRecord } from './audit-chain.js';

/** CEF header fields escape backslash and pipe. */
function cefHeader(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
}

/** CEF extension values escape backslash, equals and line breaks. */
function cefValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/=/g, '\\=').replace(/\r\n|\n/g, '\\n').replace(/\r/g, '\\r');
}

/**
 * Who did it. API mutations name `actor_key_id`; platform events in the chain (entity changes,
 * readiness, trust, …) carry `actor`, `principal` or at least the `source` that raised them. Only a
 * record naming nobody is `anonymous` (docs/security.md §10).
 */
function actorOf(p: Record<string, unknown>): string {
  for (const field of ['actor_key_id', 'actor', 'principal', 'source']) {
    const v = p[field];
    if (typeof v === 'string' && v !== '') return v;
    if (v && typeof v === 'object' && typeof (v as Record<string, unknown>)['key_id'] === 'string') return (v as Record<string, string>)['key_id']!;
  }
  return 'anonymous';
}

export function toJsonlLine(r: AuditRecord): string {
  return JSON.stringify({ id: r.id, event_type: r.event_type, payload: r.payload, timestamp_ms: Date.parse(r.timestamp) });
}

/**
 * One CEF line per record, with the escaping of the CEF specification (the reference emitted
 * unescaped text, which a SIEM mis-parses as soon as a path or message holds `=` or `|`).
 */
export function toCefLine(r: AuditRecord): string {
  let p: Record<string, unknown> = {};
  try {
    p = JSON.parse(r.payload) as Record<string, unknown>;
  } catch {
    /* an opaque payload still exports, with defaults */
  }
  const str = (v: unknown, fallback: string) => (typeof v === 'string' && v !== '' ? v : fallback);
  const ext = [
    ['rt', String(Date.parse(r.timestamp))],
    ['requestMethod', str(p['method'], 'POST')],
    ['request', str(p['path'], '/v1')],
    ['suser', actorOf(p)],
    ['cs1', str(p['correlation_id'], '')],
    ['cs1Label', 'CorrelationId'],
    ['cs2', r.hash],
    ['cs2Label', 'RecordHash'],
    ['externalId', r.id],
    ['msg', r.payload],
  ];
  const header = ['CEF:0', 'Svc', 'ControlCenter', '1.0', cefHeader(r.event_type), 'API mutation', '5'].join('|');
  return `${header}|${ext.map(([k, v]) => `${k}=${cefValue(v!)}`).join(' ')}`;
}
