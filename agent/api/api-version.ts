import { ApiError } from '../core/errors.js';
import { SUPPORTED_API_VERSIONS } from '../runtime/versions.js';

export const VERSION_POLICY =
  'Breaking changes ship under a new /v2/ path prefix. Send X-Svc-Api-Version: v1 or omit the header.';

/** The version header/metadata rule shared by REST and gRPC (D13): absent or empty passes; trimmed, case-insensitive. */
export function checkApiVersion(value: string | null | undefined): ApiError | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  if (v === '') return null;
  if ((SUPPORTED_API_VERSIONS as readonly string[]).includes(v.toLowerCase())) return null;
  return new ApiError(400, 'unsupported_api_version', 'unsupported api version', {
    requested: value,
    supported: [...SUPPORTED_API_VERSIONS],
    policy: VERSION_POLICY,
  });
}
