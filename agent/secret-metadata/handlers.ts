import { listSecrets, rotateSecret } from '../../api/domains/deployment.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['secretMetadata']);

/** Metadata of the program's secrets, never values (docs/operations.md § Secrets). */
export const secretMetadataHandlers = [
  on(listSecrets, async (_i, ctx) => (await ctx.services.secretMetadata.get()).list()),
  on(rotateSecret, async ({ params, body }, ctx) => (await ctx.services.secretMetadata.get()).rotate(params['name']!, body)),
];
