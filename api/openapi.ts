import * as z from 'zod';
import { ERROR_CODES } from './errors.js';
import { accessLabel, accessOf, isAudited, pathParams, rpcBindings, type OperationSpec } from './spec.js';
import { API_VERSION } from './versions.js';

/** Paths served outside the contract's operations but documented beside them. */
export interface ExtraPath {
  method: 'get';
  path: string;
  summary: string;
  description: string;
  tag: string;
  security: boolean;
}

export const OPENAPI_TITLE = 'Svc Control Center API';

function schemaOf(schema: z.ZodType): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete s['$schema'];
  return s;
}

const ERROR_RESPONSES: Record<string, string> = {
  '400': 'Bad request: malformed JSON, invalid field, or unsupported API version',
  '401': 'No or invalid credential where one is needed',
  '403': 'Role lacks the action, or the credential belongs to another tenant',
  '404': 'Unknown route or resource',
  '413': 'Request body larger than the configured cap',
  '429': 'Rate limit exceeded; see Retry-After',
  '500': 'Unexpected failure',
};

/**
 * The OpenAPI 3.1 document, derived from the contract (docs/wire-decisions.md D12): a route cannot be served
 * without being documented, nor documented without being served.
 */
export function buildOpenApiDocument(
  operations: readonly OperationSpec[],
  extras: readonly ExtraPath[] = [],
  /** `info.version`: the implementation's version (the contract does not know it). */
  implementationVersion = '0.0.0',
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  const securitySchemes: Record<string, unknown> = { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key or session token' } };
  for (const op of operations) {
    tags.add(op.group);
    const access = accessOf(op);
    const parameters: unknown[] = [
      { $ref: '#/components/parameters/CorrelationId' },
      { $ref: '#/components/parameters/ApiVersion' },
      ...pathParams(op.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ];
    if (op.query) {
      const q = schemaOf(op.query);
      const props = (q['properties'] ?? {}) as Record<string, unknown>;
      const required = new Set((q['required'] as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries(props)) {
        parameters.push({ name, in: 'query', required: required.has(name), schema });
      }
    }
    const entry: Record<string, unknown> = {
      operationId: op.id,
      summary: op.summary,
      tags: [op.group],
      parameters,
      responses: {
        '200': {
          description: 'Success',
          content: { 'application/json': { schema: op.response ? schemaOf(op.response) : { type: 'object' } } },
        },
        ...Object.fromEntries(
          Object.entries(ERROR_RESPONSES).map(([status, description]) => [
            status,
            { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          ]),
        ),
      },
      'x-svc-access': accessLabel(access),
      'x-svc-audit': isAudited(op),
    };
    if (op.description) entry['description'] = op.description;
    if (op.rpc) entry['x-svc-grpc-rpc'] = op.rpc.name;
    if (op.rpc && op.moreRpcs?.length) entry['x-svc-grpc-rpcs'] = rpcBindings(op).map((b) => b.rpc!.name);
    if (op.mutatesWhen) entry['x-svc-audit-when'] = `body.${op.mutatesWhen.bodyField} is true`;
    if (op.body) {
      entry['requestBody'] = { required: false, content: { 'application/json': { schema: schemaOf(op.body) } } };
    }
    entry['security'] = access.kind === 'public' ? [] : access.kind === 'read' ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }];
    if (access.kind === 'action' && access.orSharedSecret) {
      entry['x-svc-shared-secret-header'] = access.orSharedSecret.header;
      entry['security'] = [{ bearerAuth: [] }, { [`${access.orSharedSecret.secret}-secret`]: [] }];
      securitySchemes[`${access.orSharedSecret.secret}-secret`] = { type: 'apiKey', in: 'header', name: access.orSharedSecret.header, description: 'shared secret of the integration' };
    }
    const p = (paths[op.path] ??= {});
    p[op.method.toLowerCase()] = entry;
  }
  for (const extra of extras) {
    tags.add(extra.tag);
    (paths[extra.path] ??= {})[extra.method] = {
      operationId: extra.path.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, ''),
      summary: extra.summary,
      description: extra.description,
      tags: [extra.tag],
      parameters: [{ $ref: '#/components/parameters/CorrelationId' }],
      responses: {
        '101': { description: 'Switching protocols (WebSocket)' },
        '401': { description: ERROR_RESPONSES['401'], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        '403': { description: ERROR_RESPONSES['403'], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      security: extra.security ? [{}, { bearerAuth: [] }] : [],
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: OPENAPI_TITLE,
      version: implementationVersion,
      description: `REST API ${API_VERSION} of the svc control center agent. Generated from the contract.`,
    },
    servers: [{ url: '/' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes,
      parameters: {
        CorrelationId: {
          name: 'X-Correlation-ID',
          in: 'header',
          required: false,
          description: 'Echoed on the response; generated when absent',
          schema: { type: 'string' },
        },
        ApiVersion: {
          name: 'X-Svc-Api-Version',
          in: 'header',
          required: false,
          description: 'Omit or send v1 (case-insensitive)',
          schema: { type: 'string' },
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['ok', 'error', 'code'],
          properties: {
            ok: { const: false },
            error: { type: 'string', description: 'Human-readable message' },
            code: {
              type: 'string',
              enum: [...ERROR_CODES],
            },
          },
          additionalProperties: true,
        },
      },
    },
  };
}
