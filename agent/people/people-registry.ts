/**
 * The human registry of the merged configuration (docs/people.md § Registry): `[[fleet.humans]]`,
 * `[[fleet.wearables]]`, `[[fleet.twins]]` then the flat `[[humans]]`, `[[wearables]]`, `[[twins]]`,
 * each de-duplicated by id with the first occurrence winning (fleet first). Pure functions over the
 * tree; nothing here reads a file or the clock.
 */

export type Table = Record<string, unknown>;

export interface Certification {
  id: string | null;
  expires: string | null;
  issuer: string | null;
}

export interface Human {
  id: string;
  role: string;
  display_name: string | null;
  capabilities: string[];
  certifications: Certification[];
  assignments: Table | null;
  availability: string | null;
  trust_level: string | null;
  location: unknown;
  permissions: string[];
  health_status: string | null;
}

export interface Wearable {
  id: string;
  type: string;
  provider: string | null;
  human_id: string | null;
  capabilities: string[];
  protocol: string | null;
  endpoint: string | null;
  trust_level: string | null;
}

export interface PeopleTwin {
  id: string;
  entity_id: string | null;
  entity_type: string | null;
  mirror: string[];
  replay: boolean;
  telemetry_sync: boolean;
  training_session_id: string | null;
}

export interface PeopleRegistry {
  humans: Human[];
  wearables: Wearable[];
  twins: PeopleTwin[];
}

/** Capability names that an operator (a human) holds, as opposed to a robot's (docs/people.md). */
export const OPERATOR_CAPABILITIES: ReadonlySet<string> = new Set([
  'operate_robot',
  'approve_mission',
  'approve_recovery',
  'emergency_override',
  'drone_pilot',
  'medical_responder',
  'hazmat_certified',
  'remote_expert',
  'maintenance_technician',
  'forklift_operator',
  'search_rescue_operator',
]);

export const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);

export function str(v: unknown): string | null {
  if (typeof v === 'string') return v.trim() === '' ? null : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

export function strings(v: unknown): string[] {
  if (typeof v === 'string') return v === '' ? [] : [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

/** The tables of `fleet.<key>` then `<key>`, de-duplicated by `id` (first wins); entries without an id are skipped. */
function entries(tree: Table, key: string): Table[] {
  const fleet = isTable(tree['fleet']) ? tree['fleet'] : {};
  const seen = new Set<string>();
  const out: Table[] = [];
  for (const list of [fleet[key], tree[key]]) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (!isTable(item)) continue;
      const id = str(item['id']);
      if (id === null || seen.has(id)) continue;
      seen.add(id);
      out.push(item);
    }
  }
  return out;
}

function certifications(v: unknown): Certification[] {
  if (!Array.isArray(v)) return [];
  return v.map((c) =>
    isTable(c)
      ? { id: str(c['id']), expires: expiryText(c['expires']), issuer: str(c['issuer']) }
      : { id: str(c), expires: null, issuer: null },
  );
}

/** `expires` as `YYYY-MM-DD`: TOML dates arrive as strings or Date-like objects depending on the parser. */
function expiryText(v: unknown): string | null {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString().slice(0, 10);
  const s = str(v) ?? (v !== null && v !== undefined && typeof v === 'object' ? String(v) : null);
  return s === null ? null : s.slice(0, 10);
}

export function readRegistry(tree: Table): PeopleRegistry {
  const humans: Human[] = [];
  for (const h of entries(tree, 'humans')) {
    const role = str(h['role']);
    // A human without a role is not a usable registry entry (the role is required).
    if (role === null) continue;
    humans.push({
      id: str(h['id'])!,
      role,
      display_name: str(h['display_name']) ?? str(h['name']),
      capabilities: strings(h['capabilities']),
      certifications: certifications(h['certifications']),
      assignments: isTable(h['assignments']) ? h['assignments'] : null,
      availability: str(h['availability']),
      trust_level: str(h['trust_level']),
      location: h['location'] ?? null,
      permissions: strings(h['permissions']),
      health_status: str(h['health_status']),
    });
  }
  const wearables: Wearable[] = [];
  for (const w of entries(tree, 'wearables')) {
    const type = str(w['type']);
    if (type === null) continue;
    wearables.push({
      id: str(w['id'])!,
      type,
      provider: str(w['provider']),
      human_id: str(w['human_id']),
      capabilities: strings(w['capabilities']),
      protocol: str(w['protocol']),
      endpoint: str(w['endpoint']) ?? str(w['endpoint_url']),
      trust_level: str(w['trust_level']),
    });
  }
  const twins: PeopleTwin[] = entries(tree, 'twins').map((t) => ({
    id: str(t['id'])!,
    entity_id: str(t['entity_id']),
    entity_type: str(t['entity_type']),
    mirror: strings(t['mirror']),
    replay: t['replay'] === true,
    telemetry_sync: t['telemetry_sync'] === true,
    training_session_id: str(t['training_session_id']),
  }));
  return { humans, wearables, twins };
}

export const isAvailable = (h: Human): boolean => h.availability === null || h.availability.toLowerCase() === 'available';
export const isOperationalTrust = (level: string | null): boolean => level !== null && ['verified', 'trusted'].includes(level.toLowerCase());

/** Every certification's expiry is today or later (UTC date text compare); one without expiry is valid. */
export function certificationsValid(h: Human, now: number): boolean {
  const today = new Date(now).toISOString().slice(0, 10);
  return h.certifications.every((c) => c.expires === null || c.expires >= today);
}
