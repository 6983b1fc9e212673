/**
 * `parseProgram(source, file)`: tokenize, then dispatch each top-level declaration on its first
 * word (docs/program-language.md §3.1). Strict parsers fill the typed lists of `Program`; anything else
 * of the form `IDENT … { … }` / `IDENT … ;` is kept as a GenericDecl (§4.3). A file the tolerant
 * layer cannot absorb either fails with a ProgramSyntaxError of kind 'parse'.
 */

import type { GenericDecl, Program } from './ast.js';
import { emptyProgram } from './empty.js';
import {
  parseAnomalyDetector,
  parseAnomalyHandler,
  parseAssuranceCase,
  parseCertify,
  parseDecisionTree,
  parseDeploy,
  parseFaultHandler,
  parseFleet,
  parseFunction,
  parseHardware,
  parseHealthCheck,
  parseHealthPolicy,
  parseKillSwitch,
  parseKnowledgeModel,
  parseMissionPlan,
  parseMitigation,
  parseOfflinePolicy,
  parseOperatingMode,
  parsePrognostics,
  parseRequiresCapability,
  parseRequiresConnectivity,
  parseRequiresHardware,
  parseRequiresNetwork,
  parseResiliencePolicy,
  parseSafetyZone,
  parseSimulateCompatibility,
  parseStateEstimator,
  parseTriggerPolicy,
} from './declarations.js';
import { tokenize } from './lexer.js';
import { parseRobot } from './robot.js';
import { TokenCursor, describe } from './token-cursor.js';
import { genericDecl, scanDeclarationEnd, strictOrTolerant } from './tolerant.js';


export function parseProgram(source: string, file: string): Program {
  const c = new TokenCursor(tokenize(source, file), source, file);
  const program = emptyProgram(file);
  while (!c.atEnd()) {
    if (c.eat(';')) continue;
    if (!c.isIdent() && !c.is('@')) c.fail(`expected a declaration, found ${describe(c.tok)}`);
    parseTopLevel(c, program);
  }
  return program;
}

/** Which list a generic declaration goes to, by its keyword. */
function genericList(program: Program, keyword: string): GenericDecl[] {
  switch (keyword) {
    case 'geofence':
      return program.geofences;
    case 'connectivity_policy':
      return program.connectivityPolicies;
    case 'tamper_policy':
      return program.tamperPolicies;
    case 'policy':
      return program.policies;
    default:
      return program.generic;
  }
}

function parseTopLevel(c: TokenCursor, program: Program): void {
  strictOrTolerant(
    c,
    () => parseStrictTopLevel(c, program),
    (start, end) => {
      const decl = genericDecl(c, start, end);
      genericList(program, decl.keyword).push(decl);
    },
  );
}

const FUNCTION_PREFIXES = new Set(['export', 'public', 'pub', 'private', 'async', 'fn']);

function parseStrictTopLevel(c: TokenCursor, program: Program): void {
  const word = c.tok.lexeme;
  switch (word) {
    case 'module': {
      c.next();
      program.module = readDottedStatement(c, 'module');
      return;
    }
    case 'import':
    case 'use': {
      c.next();
      program.imports.push(readDottedStatement(c, word));
      return;
    }
    case 'robot':
      program.robots.push(parseRobot(c));
      return;
    case 'hardware':
      program.hardware.push(parseHardware(c));
      return;
    case 'deploy':
      program.deploys.push(parseDeploy(c));
      return;
    case 'fleet':
      program.fleets.push(parseFleet(c));
      return;
    case 'simulate_compatibility':
      program.simulateFaults.push(...parseSimulateCompatibility(c));
      return;
    case 'requires_hardware':
      program.requiresHardware = parseRequiresHardware(c);
      return;
    case 'requires_network':
      program.requiresNetwork = parseRequiresNetwork(c);
      return;
    case 'requires_connectivity':
      program.requiresConnectivity = parseRequiresConnectivity(c);
      return;
    case 'certify':
      program.certifications.push(parseCertify(c));
      return;
    case 'health_check':
      program.healthChecks.push(parseHealthCheck(c));
      return;
    case 'health_policy':
      program.healthPolicies.push(parseHealthPolicy(c));
      return;
    case 'requires_capability':
      program.requiresCapabilities.push(parseRequiresCapability(c));
      return;
    case 'kill_switch':
      program.killSwitches.push(parseKillSwitch(c));
      return;
    case 'recovery_policy':
      program.recoveryPolicies.push(parseTriggerPolicy(c, word));
      return;
    case 'continuity_policy':
      program.continuityPolicies.push(parseTriggerPolicy(c, word));
      return;
    case 'mitigation':
      program.mitigations.push(parseMitigation(c));
      return;
    case 'decision_tree':
      program.decisionTrees.push(parseDecisionTree(c));
      return;
    case 'offline_policy':
      program.offlinePolicies.push(parseOfflinePolicy(c));
      return;
    case 'mission_plan':
      program.missionPlans.push(parseMissionPlan(c));
      return;
    case 'operating_mode':
      program.operatingModes.push(parseOperatingMode(c));
      return;
    case 'assurance_case':
      program.assuranceCases.push(parseAssuranceCase(c));
      return;
    case 'knowledge_model':
      program.knowledgeModels.push(parseKnowledgeModel(c));
      return;
    case 'state_estimator':
      program.stateEstimators.push(parseStateEstimator(c));
      return;
    case 'anomaly_detector':
      program.anomalyDetectors.push(parseAnomalyDetector(c));
      return;
    case 'prognostics':
      program.prognostics.push(parsePrognostics(c));
      return;
    case 'resilience_policy':
      program.resiliencePolicies.push(parseResiliencePolicy(c));
      return;
    case 'safety_zone':
      program.safetyZones.push(parseSafetyZone(c));
      return;
    case 'on':
      if (c.is('anomaly', 1) && c.isIdent(2)) program.anomalyHandlers.push(parseAnomalyHandler(c));
      else program.faultHandlers.push(parseFaultHandler(c));
      return;
    default:
      break;
  }
  if (FUNCTION_PREFIXES.has(word) && isFunctionStart(c)) {
    program.functions.push(parseFunction(c));
    return;
  }
  // Everything else (struct, enum, trait, impl, test, extern, message, swarm, geofence, policy, …)
  // is kept whole by the tolerant layer.
  genericOrFail(c, program);
}

/** `[export|public|pub|private] [async] fn` — but not `extern "C" fn …;` (a declaration without body). */
function isFunctionStart(c: TokenCursor): boolean {
  for (let k = 0; k < 4; k += 1) {
    if (c.is('fn', k)) return true;
    if (!FUNCTION_PREFIXES.has(c.peek(k).lexeme)) return false;
  }
  return false;
}

function genericOrFail(c: TokenCursor, program: Program): void {
  const start = c.pos;
  const end = scanDeclarationEnd(c, start);
  if (end === null) {
    const stop = c.tokens[findUnterminated(c, start)]!;
    c.fail(`expected ';' or a '{ … }' block to end the '${c.tokens[start]!.lexeme}' declaration, found ${describe(stop)}`, stop);
  }
  const decl = genericDecl(c, start, end);
  genericList(program, decl.keyword).push(decl);
  c.pos = end;
}

/** The token where an unterminated declaration ran out (`}` of the parent or end of file). */
function findUnterminated(c: TokenCursor, start: number): number {
  for (let i = start; i < c.tokens.length; ) {
    const token = c.tokens[i]!;
    if (token.type === 'eof') return i;
    if (token.type === 'punct' && (token.lexeme === '(' || token.lexeme === '[')) {
      i = c.after(i);
      continue;
    }
    if (token.type === 'punct' && (token.lexeme === '}' || token.lexeme === ')' || token.lexeme === ']')) return i;
    i += 1;
  }
  return c.tokens.length - 1;
}

/** `a.b.c [as x] ;` → `a.b.c` (a string module path is taken as written). */
function readDottedStatement(c: TokenCursor, keyword: string): string {
  let name: string;
  if (c.tok.type === 'string') name = String(c.next().value);
  else {
    name = c.ident(`after '${keyword}'`);
    while (c.is('.') && (c.isIdent(1) || c.is('*', 1))) {
      c.next();
      name += `.${c.next().lexeme}`;
    }
  }
  while (!c.is(';')) {
    if (c.atEnd() || c.is('}')) c.fail(`expected ';' after ${keyword} ${name}, found ${describe(c.tok)}`);
    if (c.is('{')) c.pos = c.after(c.pos);
    else c.next();
  }
  c.next();
  return name;
}
