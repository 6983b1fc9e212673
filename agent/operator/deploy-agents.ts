import { readAgentEntries } from './fleet-agents.js';

export const DEPLOY_AGENTS_FILE = 'deploy-agents.json';

/** A deploy agent: the on-board agent that installs rollouts for one `<Robot>@<Hardware>` target. */
export interface StoredDeployAgent {
  target: string;
  url: string;
  token?: string;
}

/**
 * The deploy agent registry (`{agents:[{target:"<Robot>@<Hardware>", url, token?}]}`): the file named
 * by `SVC_DEPLOY_AGENTS`, else `deploy-agents.json` in the state directory (docs/operations.md §
 * Rollouts). Like the fleet agent registry it is written by other tools, so every read goes to the file;
 * a missing or unreadable file is an empty registry. A `url` may point at a relay
 * (`http://relay/agents/<id>`), which forwards the calls to the agent over its trunk.
 */
export class DeployAgentRegistry {
  constructor(readonly file: string) {}

  /** Entries with a target and a URL, tokens included (callers never put a token in a response). */
  stored(): StoredDeployAgent[] {
    return readAgentEntries<StoredDeployAgent>(this.file, (a) => typeof a['target'] === 'string' && typeof a['url'] === 'string');
  }

  /** The agent installing `target` (`<Robot>@<Hardware>`), if registered. */
  find(target: string): StoredDeployAgent | undefined {
    return this.stored().find((a) => a.target === target);
  }
}
