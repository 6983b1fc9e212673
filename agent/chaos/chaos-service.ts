import type { ProgramService } from '../programs/program-service.js';
import type { ChaosExperiments } from './experiments.js';
import { CHAOS_INJECTIONS, NO_PROGRAM_MESSAGE } from './injections.js';

let staticModule: Promise<typeof import('./static-experiment.js')> | null = null;

/** The chaos domain: the static experiment over the loaded program, and live experiments on devices. */
export class ChaosService {
  constructor(
    private readonly programs: ProgramService,
    readonly experiments: ChaosExperiments,
  ) {}

  /** Static experiment (no device is touched); loads the program analyses on first use, like the program routes. */
  async simulate(injections: readonly unknown[] | undefined) {
    const ws = this.programs.workspace;
    if (!ws.programPath) return { ok: false, message: NO_PROGRAM_MESSAGE, injections: [...CHAOS_INJECTIONS] };
    staticModule ??= import('./static-experiment.js');
    const { staticExperiment } = await staticModule;
    return { ok: true, report: staticExperiment(ws, (injections ?? []).filter((x): x is string => typeof x === 'string')) };
  }
}
