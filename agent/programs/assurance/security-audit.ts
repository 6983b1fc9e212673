/**
 * A small static security audit of a program, feeding trust's `identity_validation` (docs/program-language.md §19): how
 * the program's networked endpoints are reached and whether its commands are authenticated.
 * Errors cost 25 points, warnings 8, infos 2.
 */
import type { Program, RobotDecl } from '../language/ast.js';

export interface SecurityFinding {
  severity: 'error' | 'warning' | 'info';
  message: string;
}

/** URL schemes that carry data in the clear; their TLS twins (https, mqtts, wss, rtsps) are fine. */
const PLAINTEXT_SCHEMES: ReadonlySet<string> = new Set(['http', 'mqtt', 'ws', 'rtsp', 'tcp', 'udp', 'coap', 'ftp', 'telnet']);

function schemeOf(endpoint: string): string | null {
  const match = /^([a-z][a-z0-9+.-]*):\/\//i.exec(endpoint.trim());
  return match ? match[1]!.toLowerCase() : null;
}

/** `scheme://user:password@host` puts a secret into the program text. */
function embedsCredentials(endpoint: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]+:[^/@\s]*@/i.test(endpoint.trim());
}

function hasGeneric(robot: RobotDecl, keyword: string): boolean {
  return robot.generic.some((decl) => decl.keyword === keyword);
}

/** Trust boundaries anywhere in the program (robot members or top-level declarations). */
export function hasTrustBoundary(program: Program): boolean {
  return program.robots.some((robot) => hasGeneric(robot, 'trust_boundary')) || program.generic.some((d) => d.keyword === 'trust_boundary');
}

export function auditProgramSecurity(program: Program): SecurityFinding[] {
  const findings: SecurityFinding[] = [];
  for (const robot of program.robots) {
    const endpoints = [
      ...robot.sensors.filter((s) => s.source !== null).map((s) => ({ what: `Sensor '${s.name}'`, endpoint: s.source!, secure: false })),
      ...robot.topics.flatMap((t) => (t.channel === null ? [] : [{ what: `Topic '${t.name}'`, endpoint: t.channel, secure: t.secure === true }])),
    ];
    // Networked endpoints not covered by a `secure` topic declaration (docs/program-language.md §4.1 "Forms added in issue 18").
    let unsecured = false;
    for (const { what, endpoint, secure } of endpoints) {
      const scheme = schemeOf(endpoint);
      if (scheme === null) continue;
      if (!secure) unsecured = true;
      if (embedsCredentials(endpoint)) {
        findings.push({ severity: 'error', message: `${what} on robot '${robot.name}' embeds credentials in its endpoint URL` });
      }
      if (PLAINTEXT_SCHEMES.has(scheme)) {
        findings.push(
          secure
            ? { severity: 'error', message: `${what} on robot '${robot.name}' is declared secure but uses plaintext ${scheme}://` }
            : { severity: 'warning', message: `${what} on robot '${robot.name}' uses plaintext ${scheme}://` },
        );
      }
    }
    if (unsecured && !hasGeneric(robot, 'secure_comm')) {
      findings.push({ severity: 'info', message: `Robot '${robot.name}' reaches networked endpoints without a secure_comm block` });
    }
  }
  const killSwitches = [...program.killSwitches, ...program.robots.flatMap((robot) => robot.killSwitches)];
  for (const killSwitch of killSwitches) {
    if (!killSwitch.remoteSigned) {
      findings.push({ severity: 'info', message: `Kill switch '${killSwitch.name}' accepts unsigned remote activation (add remote_signed)` });
    }
  }
  return findings;
}
