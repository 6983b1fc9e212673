import { homeostasisCheck, reflexList } from './autonomy.js';
import { decisionList } from './decisions.js';
import { entityGraph, entityList } from './entities.js';
import { recoveryExplanation, recoveryReport } from './recovery.js';
import type { TextForm } from './text-form.js';

export type { TextForm } from './text-form.js';

/** Text forms by operation id; an operation without one prints its JSON body. */
export const TEXT_FORMS: Readonly<Record<string, TextForm>> = {
  listEntities: entityList,
  getEntityGraph: entityGraph,
  planRecovery: recoveryReport,
  simulateRecovery: recoveryReport,
  validateRecovery: recoveryReport,
  executeRecovery: recoveryReport,
  explainRecovery: recoveryExplanation,
  listDecisions: decisionList,
  listAutonomyReflexes: reflexList,
  getAutonomyHomeostasis: homeostasisCheck,
};
