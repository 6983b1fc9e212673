import { entityGraph, entityList } from './entities.js';
import type { TextForm } from './text-form.js';

export type { TextForm } from './text-form.js';

/** Text forms by operation id; an operation without one prints its JSON body. */
export const TEXT_FORMS: Readonly<Record<string, TextForm>> = {
  listEntities: entityList,
  getEntityGraph: entityGraph,
};
