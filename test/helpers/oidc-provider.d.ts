/**
 * Minimal typings for the parts of `oidc-provider` (v9, shipped without TypeScript declarations) that
 * the tests use. Only the test helper imports the package.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface OidcProviderContext {
    oidc: {
      params?: Record<string, unknown>;
      client?: { clientId: string };
    };
    body?: unknown;
  }

  export interface OidcAccount {
    accountId: string;
    claims(use: string, scope: string, claims: unknown, rejected: string[]): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    readonly issuer: string;
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: any[]) => void): this;
  }
}
