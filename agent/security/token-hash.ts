import crypto from 'node:crypto';
import { constantTimeEqual } from './constant-time.js';

/** `token_hash` = lowercase hex HMAC-SHA256(key = pepper, message = token) (docs/security.md §2). */
export function hashToken(pepper: string, token: string): string {
  return crypto.createHmac('sha256', pepper).update(token, 'utf8').digest('hex');
}

export function hashMatches(storedHash: string, presentedHash: string): boolean {
  return constantTimeEqual(storedHash.toLowerCase(), presentedHash);
}

/** 256-bit random token, lowercase hex: the form of every API key we issue. */
export function generateToken(): string {
  return crypto.randomBytes(32).toString('hex');
}
