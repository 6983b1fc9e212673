import { SUPPORTED_API_VERSIONS, VERSION_POLICY } from '../../api/versions.js';
import { ApiError } from './errors.js';

/** The version header/metadata rule shared by REST and gRPC (docs/wire-decisions.md D13): absent or empty passes; trimmed, case-insensitive. */
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
