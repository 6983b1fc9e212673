/**
 * Compliance profiles, program evaluation and accreditation exports (docs/operations.md § Reports).
 * Pure functions, shared by the report export and the compliance routes.
 */
export * from './profiles.js';
export * from './evaluate.js';
export * from './accreditation.js';
