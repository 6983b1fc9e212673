/** Types of render.mjs, for the staleness test (test/clients-ts/generated.test.ts). */
export function schemaToTs(schema: unknown, defs?: Record<string, unknown>, depth?: number, seen?: Set<string>): string;
export function renderOperations(
  api: {
    SPECS: readonly unknown[];
    accessOf: (op: any) => unknown;
    accessLabel: (access: any) => string;
    isMutation: (op: any) => boolean;
    pathParams: (path: string) => string[];
  },
  z: unknown,
): string;
