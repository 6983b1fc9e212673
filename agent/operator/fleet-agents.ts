import fs from 'node:fs';
import path from 'node:path';

export const FLEET_AGENTS_FILE = 'fleet-agents.json';

/**
 * The `agents` entries of an agent registry file (`{agents:[…]}`) that pass `valid`. The registries
 * are written by other tools, so a missing, unreadable or malformed file is an empty registry.
 */
export function readAgentEntries<T>(file: string, valid: (entry: Record<string, unknown>) => boolean): T[] {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
  const agents = raw && typeof raw === 'object' && Array.isArray((raw as { agents?: unknown }).agents) ? (raw as { agents: unknown[] }).agents : [];
  return agents.filter((a) => !!a && typeof a === 'object' && valid(a as Record<string, unknown>)) as T[];
}

/** A fleet agent as the registry file stores it: the robot, its relay endpoint and (maybe) a bearer token. */
export interface StoredFleetAgent {
  robot_name: string;
  url: string;
  token?: string;
}

/** What the API shows of an agent: never the token, only whether one is set. */
export interface FleetAgentView {
  robot_name: string;
  url: string;
  token_set: boolean;
}

/**
 * The fleet agent registry file `fleet-agents.json` (`{agents:[{robot_name, url, token?}]}`) in the
 * state directory. It is written by another process (the CLI's agent registration, later the relay),
 * so every read goes to the file; a missing or unreadable file is an empty registry.
 */
export class FleetAgentRegistry {
  readonly file: string;

  constructor(stateDir: string) {
    this.file = path.join(stateDir, FLEET_AGENTS_FILE);
  }

  /** The stored entries, tokens included: for code that calls the agents (drift, OTA), never for a response. */
  stored(): StoredFleetAgent[] {
    return this.read();
  }

  private read(): StoredFleetAgent[] {
    return readAgentEntries<StoredFleetAgent>(this.file, (a) => typeof a['robot_name'] === 'string' && typeof a['url'] === 'string');
  }

  /** Agents sorted by robot name; tokens replaced by `token_set`. */
  list(): FleetAgentView[] {
    return this.read()
      .map((a) => ({ robot_name: a.robot_name, url: a.url, token_set: typeof a.token === 'string' && a.token.length > 0 }))
      .sort((a, b) => a.robot_name.localeCompare(b.robot_name));
  }

  count(): number {
    return this.read().length;
  }
}
