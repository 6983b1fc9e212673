import type { ProgramFactsSource } from '../entities/program-facts.js';
import type { Services } from '../runtime/services.js';
import type { ResolvedSecrets } from '../security/secrets.js';
import type { HandlerBinding, ServiceName } from './handlers.js';

/** What every module may read at start besides the services of the modules opened before it. */
export interface Boot {
  secrets: ResolvedSecrets;
  cwd: string;
  log: (line: string) => void;
  /** Facts of the loaded program for the entity registry, when the caller supplies its own. */
  programFacts?: ProgramFactsSource;
}

export interface ModuleContext {
  boot: Boot;
  /** A service provided by the agent's boot (settings, project, bus, …) or by a module opened earlier. */
  use<K extends ServiceName>(name: K): Services[K];
}

export interface OpenedModule {
  /** The services this domain adds to the container, for later modules and for handlers that declare them. */
  provides?: Partial<Services>;
  /** The domain's handlers, one per spec of its part of the contract (`handlersFor`). */
  handlers?: readonly HandlerBinding[];
  /** Flushes and stops what `open` started; the agent closes modules in the reverse order of opening. */
  close?(): void | Promise<void>;
}

/**
 * A domain of the agent (docs/architecture.md, "Adding a domain"): one folder holding its service,
 * its store, its handlers and this declaration. `agent/runtime/modules.ts` lists the modules in the
 * order they open.
 */
export interface DomainModule {
  name: string;
  open(ctx: ModuleContext): OpenedModule | Promise<OpenedModule>;
}

export function defineModule(module: DomainModule): DomainModule {
  return module;
}
