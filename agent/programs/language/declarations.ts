/**
 * Strict parsers for the top-level declarations the analyses read: the core (hardware, deploy,
 * fleet, simulate_compatibility, requirements, certify), functions, and the policy-style forms of
 * docs/program-language.md §5.2. Each reads from the declaration keyword and leaves the cursor after it.
 */

import type {
  AnomalyDetectorDecl,
  AnomalyHandlerDecl,
  AssuranceCaseDecl,
  CertifyDecl,
  DecisionTreeDecl,
  DeployDecl,
  FleetDecl,
  FunctionDecl,
  HardwareProfileDecl,
  HardwareRequirements,
  HealthCheckDecl,
  HealthPolicyDecl,
  KillSwitchDecl,
  KnowledgeModelDecl,
  MissionPlanDecl,
  MitigationDecl,
  NetworkRequirements,
  OfflinePolicyDecl,
  OperatingModeDecl,
  PrognosticsDecl,
  Quantity,
  RequiresCapabilityDecl,
  ResiliencePolicyDecl,
  SafetyZoneDecl,
  StateEstimatorDecl,
  Stmt,
  TriggerPolicyDecl,
} from './ast.js';
import { parseDotted, parseNameList, parseParams, parseType, readQuantity } from './expressions.js';
import { eatSeparator, findStop, forEachItem, readActionBlock, readTextUntilBrace, readTextUntilSemicolon } from './items.js';
import { parseBlock } from './statements.js';
import type { TokenCursor } from './token-cursor.js';
import { describe } from './token-cursor.js';
import { joinCondition, joinTokens } from './token-join.js';
import { toMbps, toMegabytes, toMilliseconds, toWattHours, toWatts } from './units.js';

function endDecl(c: TokenCursor, what: string): void {
  if (!c.eat(';')) c.fail(`expected ';' after ${what}, found ${describe(c.tok)}`);
}

/** `NAME` after a keyword; strings are accepted too (`certify "ISO 13482"`). */
function declName(c: TokenCursor, what: string): string {
  if (c.tok.type === 'string') return String(c.next().value);
  return c.ident(`for the ${what}`);
}

// ---------------------------------------------------------------------------
// Core

export function parseHardware(c: TokenCursor): HardwareProfileDecl {
  const loc = c.loc();
  c.expect('hardware', '');
  const decl: HardwareProfileDecl = {
    name: declName(c, 'hardware profile'),
    cpu: null,
    memoryMb: null,
    storageMb: null,
    gpu: null,
    sensors: [],
    actuators: [],
    connectivity: [],
    batteryWh: null,
    bandwidthMbps: null,
    latencyMs: null,
    minPeriodMs: null,
    powerW: null,
    loc,
  };
  forEachItem(c, `to open hardware '${decl.name}'`, (word) => {
    c.next();
    switch (word.lexeme) {
      case 'cpu':
        eatSeparator(c);
        decl.cpu = readTextUntilSemicolon(c, true);
        return true;
      case 'memory':
      case 'storage': {
        eatSeparator(c);
        const mb = toMegabytes(readQuantity(c));
        if (word.lexeme === 'memory') decl.memoryMb = mb;
        else decl.storageMb = mb;
        endDecl(c, `hardware ${word.lexeme}`);
        return true;
      }
      case 'gpu':
        eatSeparator(c);
        if (c.is('true') || c.is('false')) decl.gpu = c.next().lexeme === 'true';
        else decl.gpu = readQuantity(c).value;
        endDecl(c, 'hardware gpu');
        return true;
      case 'sensors':
      case 'actuators':
      case 'connectivity': {
        eatSeparator(c);
        decl[word.lexeme] = parseNameList(c);
        c.eat(';');
        return true;
      }
      case 'battery':
        if (c.is('{')) {
          forEachItem(c, 'to open the battery block', (item) => {
            if (item.lexeme !== 'capacity') return false;
            c.next();
            eatSeparator(c);
            decl.batteryWh = toWattHours(readQuantity(c));
            return true;
          });
        } else {
          eatSeparator(c);
          decl.batteryWh = toWattHours(readQuantity(c));
          endDecl(c, 'hardware battery');
        }
        return true;
      case 'network':
        forEachItem(c, 'to open the network block', (item) => {
          if (item.lexeme !== 'bandwidth' && item.lexeme !== 'latency') return false;
          c.next();
          eatSeparator(c);
          const q = readQuantity(c);
          if (item.lexeme === 'bandwidth') decl.bandwidthMbps = toMbps(q);
          else decl.latencyMs = toMilliseconds(q);
          return true;
        });
        return true;
      case 'timing':
        forEachItem(c, 'to open the timing block', (item) => {
          if (item.lexeme !== 'min_period') return false;
          c.next();
          eatSeparator(c);
          decl.minPeriodMs = toMilliseconds(readQuantity(c));
          return true;
        });
        return true;
      case 'resource':
      case 'power': {
        // `resource: 10 W;` — `10 W` lexes as a unit literal (W is a power unit); a bare number is W too.
        if (c.is('{')) {
          forEachItem(c, 'to open the resource block', (item) => {
            if (item.lexeme !== 'power') return false;
            c.next();
            eatSeparator(c);
            decl.powerW = toWatts(readQuantity(c));
            return true;
          });
          return true;
        }
        eatSeparator(c);
        decl.powerW = toWatts(readQuantity(c));
        if (c.is('W')) c.next();
        endDecl(c, 'hardware resource');
        return true;
      }
      default:
        return false;
    }
  });
  return decl;
}

export function parseDeploy(c: TokenCursor): DeployDecl {
  const loc = c.loc();
  c.expect('deploy', '');
  const robot = c.ident("for the robot after 'deploy'");
  c.expect('to', `after 'deploy ${robot}'`);
  const targets = c.is('[') ? parseNameList(c) : [c.ident(`for the deploy target of '${robot}'`)];
  endDecl(c, 'deploy declaration');
  return { robot, targets, loc };
}

export function parseFleet(c: TokenCursor): FleetDecl {
  const loc = c.loc();
  c.expect('fleet', '');
  const name = declName(c, 'fleet');
  const members: string[] = [];
  forEachItem(c, `to open fleet '${name}'`, (word) => {
    if (word.type !== 'ident') return false;
    if (c.is('[', 1) || ((c.is(':', 1) || c.is('=', 1)) && c.is('[', 2))) {
      // `robots [A, B];`
      c.next();
      eatSeparator(c);
      members.push(...parseNameList(c));
      c.eat(';');
      return true;
    }
    if (c.is('robot', 0) && c.isIdent(1)) c.next();
    if (!c.is(';', 1) && !c.is(',', 1) && !c.is('}', 1)) return false;
    members.push(c.next().lexeme);
    return true;
  });
  return { name, members, loc };
}

export function parseSimulateCompatibility(c: TokenCursor): string[] {
  c.expect('simulate_compatibility', '');
  const faults: string[] = [];
  forEachItem(c, 'to open simulate_compatibility', (word) => {
    if (word.lexeme !== 'fault') return false;
    c.next();
    faults.push(c.ident("after 'fault'"));
    return true;
  });
  return faults;
}

export function emptyHardwareRequirements(loc: HardwareRequirements['loc']): HardwareRequirements {
  return { memoryGb: null, storageGb: null, gpu: null, sensors: [], actuators: [], loc };
}

/** Skips a comparison or separator between a requirement word and its value. */
function eatRelation(c: TokenCursor): void {
  for (const op of ['>=', '<=', '>', '<', '==', ':', '=']) if (c.eat(op)) return;
}

export function parseRequiresHardware(c: TokenCursor): HardwareRequirements {
  const loc = c.loc();
  c.expect('requires_hardware', '');
  const req = emptyHardwareRequirements(loc);
  forEachItem(c, 'to open requires_hardware', (word) => {
    c.next();
    switch (word.lexeme) {
      case 'memory':
      case 'storage': {
        eatRelation(c);
        const q = readQuantity(c);
        const gb = q.unit === null ? q.value : (toMegabytes(q) ?? 0) / 1024;
        if (word.lexeme === 'memory') req.memoryGb = gb;
        else req.storageGb = gb;
        return true;
      }
      case 'gpu':
        eatRelation(c);
        req.gpu = c.is('false') ? false : true;
        if (c.is('true') || c.is('false')) c.next();
        return true;
      case 'sensors':
      case 'actuators':
        eatSeparator(c);
        req[word.lexeme] = parseNameList(c);
        return true;
      default:
        return false;
    }
  });
  return req;
}

export function emptyNetworkRequirements(loc: NetworkRequirements['loc']): NetworkRequirements {
  return { bandwidthMbps: null, latencyMs: null, connectivity: [], loc };
}

export function parseRequiresNetwork(c: TokenCursor): NetworkRequirements {
  const loc = c.loc();
  c.expect('requires_network', '');
  const req = emptyNetworkRequirements(loc);
  forEachItem(c, 'to open requires_network', (word) => {
    c.next();
    switch (word.lexeme) {
      case 'bandwidth':
        eatRelation(c);
        req.bandwidthMbps = toMbps(readQuantity(c));
        return true;
      case 'latency':
        eatRelation(c);
        req.latencyMs = toMilliseconds(readQuantity(c));
        return true;
      case 'connectivity':
        eatSeparator(c);
        req.connectivity.push(...parseNameList(c));
        return true;
      default:
        return false;
    }
  });
  return req;
}

/** `requires_connectivity [WiFi, LTE];` or a block of links / lists. */
export function parseRequiresConnectivity(c: TokenCursor): NetworkRequirements {
  const loc = c.loc();
  c.expect('requires_connectivity', '');
  const req = emptyNetworkRequirements(loc);
  eatSeparator(c);
  if (c.is('[')) {
    req.connectivity = parseNameList(c);
    c.eat(';');
    return req;
  }
  forEachItem(c, 'to open requires_connectivity', () => {
    const stop = findStop(c, true);
    for (let i = c.pos; i < stop; i += 1) {
      if (c.tokens[i]!.lexeme === '[' && c.tokens[i]!.type === 'punct') {
        c.pos = i;
        req.connectivity.push(...parseNameList(c));
        return true;
      }
    }
    if (stop === c.pos + 1 && c.isIdent()) {
      req.connectivity.push(c.next().lexeme);
      return true;
    }
    return false;
  });
  return req;
}

export function parseCertify(c: TokenCursor): CertifyDecl {
  const loc = c.loc();
  c.expect('certify', '');
  const standard = declName(c, 'certification standard');
  let level: string | null = null;
  if (c.is('{')) {
    forEachItem(c, 'to open the certify block', (word) => {
      if (word.lexeme !== 'level') return false;
      c.next();
      eatSeparator(c);
      level = readTextUntilSemicolon(c, true);
      return true;
    });
    c.eat(';');
  } else {
    if (c.eat('level')) level = c.next().lexeme;
    endDecl(c, `certify ${standard}`);
  }
  return { standard, level, loc };
}

/** `[export|public|pub|private] [async] fn NAME (params) [-> Type] block` */
export function parseFunction(c: TokenCursor): FunctionDecl {
  const loc = c.loc();
  let exported = false;
  let isAsync = false;
  for (;;) {
    if (c.is('export') || c.is('public') || c.is('pub')) exported = true;
    else if (c.is('async')) isAsync = true;
    else if (!c.is('private')) break;
    c.next();
  }
  c.expect('fn', 'to start the function');
  const name = c.ident("after 'fn'");
  const params = parseParams(c);
  const returnType = c.eat('->') ? parseType(c) : null;
  const body = parseBlock(c, `to open the body of function '${name}'`);
  return { name, params, returnType, body, exported, async: isAsync, loc };
}

// ---------------------------------------------------------------------------
// Policy-style declarations (docs/program-language.md §5.2)

const COMPARISON_OPERATORS = new Set(['<', '<=', '>', '>=', '==', '!=']);

/** `METRIC OP THRESHOLD ;` → metric by the condition rule, threshold by the join rule. */
function readMetricRule(c: TokenCursor): { metric: string; operator: string; threshold: string } {
  const start = c.pos;
  const stop = findStop(c, false);
  let opIndex = -1;
  for (let i = start; i < stop; i += 1) {
    const token = c.tokens[i]!;
    if (token.type === 'punct' && COMPARISON_OPERATORS.has(token.lexeme)) {
      opIndex = i;
      break;
    }
    if (token.type === 'punct' && (token.lexeme === '(' || token.lexeme === '[')) i = c.match[i]!;
  }
  c.pos = stop;
  c.eat(';');
  if (opIndex < 0) return { metric: joinCondition(c.tokens, start, stop), operator: '', threshold: '' };
  return {
    metric: joinCondition(c.tokens, start, opIndex),
    operator: c.tokens[opIndex]!.lexeme,
    threshold: joinTokens(c.tokens, opIndex + 1, stop),
  };
}

export function parseHealthCheck(c: TokenCursor): HealthCheckDecl {
  const loc = c.loc();
  c.expect('health_check', '');
  const decl: HealthCheckDecl = { name: declName(c, 'health check'), targetKind: null, target: null, checks: [], requirements: [], loc };
  if (c.eat('for')) {
    if (c.is('robot') || c.is('fleet')) decl.targetKind = c.next().lexeme as 'robot' | 'fleet';
    decl.target = c.ident(`for the target of health_check '${decl.name}'`);
  }
  forEachItem(c, `to open health_check '${decl.name}'`, (word) => {
    if (word.lexeme === 'check') {
      const checkLoc = c.loc();
      c.next();
      decl.checks.push({ ...readMetricRule(c), loc: checkLoc });
      return true;
    }
    if (word.lexeme === 'require') {
      decl.requirements.push(readTextUntilSemicolon(c));
      return true;
    }
    return false;
  });
  return decl;
}

export function parseHealthPolicy(c: TokenCursor): HealthPolicyDecl {
  const loc = c.loc();
  c.expect('health_policy', '');
  const decl: HealthPolicyDecl = { name: declName(c, 'health policy'), handlers: [], loc };
  forEachItem(c, `to open health_policy '${decl.name}'`, (word) => {
    if (word.lexeme !== 'on') return false;
    c.next();
    const status = readTextUntilBrace(c, "after 'on'", true);
    decl.handlers.push({ status, actions: readActionBlock(c, `to open the '${status}' handler`) });
    return true;
  });
  return decl;
}

export function parseRequiresCapability(c: TokenCursor): RequiresCapabilityDecl {
  const loc = c.loc();
  c.expect('requires_capability', '');
  const decl: RequiresCapabilityDecl = { capability: declName(c, 'capability'), sensors: [], actuators: [], connectivity: [], loc };
  if (c.eat(';')) return decl;
  forEachItem(c, `to open requires_capability '${decl.capability}'`, (word) => {
    if (word.lexeme === 'any_of' || word.lexeme === 'all_of') c.next();
    const group = c.tok.lexeme;
    if (group !== 'sensors' && group !== 'actuators' && group !== 'connectivity') return false;
    c.next();
    eatSeparator(c);
    decl[group].push(...parseNameList(c));
    return true;
  });
  return decl;
}

export function parseKillSwitch(c: TokenCursor): KillSwitchDecl {
  const loc = c.loc();
  c.expect('kill_switch', '');
  const decl: KillSwitchDecl = { name: declName(c, 'kill switch'), priority: null, remoteSigned: false, actions: [], body: [], loc };
  forEachItem(c, `to open kill_switch '${decl.name}'`, (word) => {
    switch (word.lexeme) {
      case 'priority':
        c.next();
        eatSeparator(c);
        decl.priority = readTextUntilSemicolon(c, true);
        return true;
      case 'remote_signed':
        c.next();
        decl.remoteSigned = true;
        if (c.eat(':') || c.eat('=')) decl.remoteSigned = c.next().lexeme !== 'false';
        c.eat(';');
        return true;
      case 'action':
      case 'actions': {
        c.next();
        const blockStart = c.pos;
        decl.actions.push(...readActionBlock(c, 'to open the kill switch action'));
        const after = c.pos;
        c.pos = blockStart;
        decl.body.push(...parseBlock(c, 'to open the kill switch action'));
        c.pos = after;
        return true;
      }
      default:
        return false;
    }
  });
  return decl;
}

/** recovery_policy / continuity_policy: `{ on COND { ACTION; … } … }` */
export function parseTriggerPolicy(c: TokenCursor, keyword: string): TriggerPolicyDecl {
  const loc = c.loc();
  c.expect(keyword, '');
  const decl: TriggerPolicyDecl = { name: declName(c, keyword), triggers: [], loc };
  forEachItem(c, `to open ${keyword} '${decl.name}'`, (word) => {
    if (word.lexeme !== 'on' && word.lexeme !== 'when' && word.lexeme !== 'if') return false;
    c.next();
    const condition = readTextUntilBrace(c, `after '${word.lexeme}'`, true);
    decl.triggers.push({ condition, actions: readActionBlock(c, `to open the '${condition}' actions`) });
    return true;
  });
  return decl;
}

export function parseMitigation(c: TokenCursor): MitigationDecl {
  const loc = c.loc();
  c.expect('mitigation', '');
  const decl: MitigationDecl = { name: declName(c, 'mitigation'), rules: [], loc };
  forEachItem(c, `to open mitigation '${decl.name}'`, (word) => {
    if (word.lexeme !== 'if' && word.lexeme !== 'on' && word.lexeme !== 'when') return false;
    c.next();
    const condition = readTextUntilBrace(c, `after '${word.lexeme}'`, true);
    decl.rules.push({ condition, actions: readActionBlock(c, `to open the '${condition}' actions`) });
    return true;
  });
  return decl;
}

export function parseDecisionTree(c: TokenCursor): DecisionTreeDecl {
  const loc = c.loc();
  c.expect('decision_tree', '');
  const decl: DecisionTreeDecl = { name: declName(c, 'decision tree'), layer: null, version: null, rules: [], loc };
  if (c.isIdent() && c.is('{', 1)) decl.layer = c.next().lexeme;
  else if ((c.is('layer') || c.is('at')) && c.isIdent(1) && c.is('{', 2)) {
    c.next();
    decl.layer = c.next().lexeme;
  }
  forEachItem(c, `to open decision_tree '${decl.name}'`, (word) => {
    if (word.lexeme === 'version') {
      c.next();
      eatSeparator(c);
      decl.version = c.tok.type === 'string' ? String(c.next().value) : readTextUntilSemicolon(c);
      c.eat(';');
      return true;
    }
    if (word.lexeme === 'when' || word.lexeme === 'if') {
      const ruleLoc = c.loc();
      c.next();
      const condition = readTextUntilBrace(c, `after '${word.lexeme}'`, false);
      decl.rules.push({ condition, actions: readActionBlock(c, 'to open the decision actions'), loc: ruleLoc });
      return true;
    }
    return false;
  });
  return decl;
}

export function parseOfflinePolicy(c: TokenCursor): OfflinePolicyDecl {
  const loc = c.loc();
  c.expect('offline_policy', '');
  const decl: OfflinePolicyDecl = { name: declName(c, 'offline policy'), maxDuration: null, allowedActions: [], forbiddenActions: [], loc };
  forEachItem(c, `to open offline_policy '${decl.name}'`, (word) => {
    c.next();
    switch (word.lexeme) {
      case 'max_duration': {
        eatRelation(c);
        decl.maxDuration = readQuantity(c) as Quantity;
        return true;
      }
      case 'allowed_actions':
      case 'allow':
        eatSeparator(c);
        decl.allowedActions.push(...parseNameList(c));
        return true;
      case 'forbidden_actions':
      case 'forbid':
        eatSeparator(c);
        decl.forbiddenActions.push(...parseNameList(c));
        return true;
      default:
        return false;
    }
  });
  return decl;
}

export function parseMissionPlan(c: TokenCursor): MissionPlanDecl {
  const loc = c.loc();
  c.expect('mission_plan', '');
  const decl: MissionPlanDecl = { name: declName(c, 'mission plan'), steps: [], constraints: [], loc };
  forEachItem(c, `to open mission_plan '${decl.name}'`, (word) => {
    if (word.lexeme === 'step') {
      c.next();
      decl.steps.push(readTextUntilSemicolon(c, true));
      return true;
    }
    if (word.lexeme === 'constraint') {
      c.next();
      decl.constraints.push(readTextUntilSemicolon(c));
      return true;
    }
    return false;
  });
  return decl;
}

export function parseOperatingMode(c: TokenCursor): OperatingModeDecl {
  const loc = c.loc();
  c.expect('operating_mode', '');
  const decl: OperatingModeDecl = { name: declName(c, 'operating mode'), kind: null, loc };
  forEachItem(c, `to open operating_mode '${decl.name}'`, (word) => {
    if (word.type !== 'ident') return false;
    if ((word.lexeme === 'kind' || word.lexeme === 'type') && (c.is(':', 1) || c.is('=', 1))) {
      c.next();
      c.next();
    }
    if (decl.kind === null) decl.kind = c.ident('for the operating mode kind');
    else return false;
    return true;
  });
  return decl;
}

export function parseAssuranceCase(c: TokenCursor): AssuranceCaseDecl {
  const loc = c.loc();
  c.expect('assurance_case', '');
  const decl: AssuranceCaseDecl = { name: declName(c, 'assurance case'), evidence: [], loc };
  forEachItem(c, `to open assurance_case '${decl.name}'`, (word) => {
    if (word.lexeme !== 'evidence') return false;
    c.next();
    eatSeparator(c);
    if (c.is('[')) decl.evidence.push(...parseNameList(c));
    else decl.evidence.push(readTextUntilSemicolon(c, true));
    return true;
  });
  return decl;
}

export function parseKnowledgeModel(c: TokenCursor): KnowledgeModelDecl {
  const loc = c.loc();
  c.expect('knowledge_model', '');
  const decl: KnowledgeModelDecl = { name: declName(c, 'knowledge model'), components: [], dependencies: [], loc };
  forEachItem(c, `to open knowledge_model '${decl.name}'`, (word) => {
    if (word.lexeme === 'component') {
      c.next();
      decl.components.push(readTextUntilSemicolon(c, true));
      return true;
    }
    if (word.lexeme === 'dependency') {
      c.next();
      const capability = parseDotted(c, "after 'dependency'");
      c.expect('requires', `after 'dependency ${capability}'`);
      eatSeparator(c);
      const requires = c.is('[') ? parseNameList(c) : [parseDotted(c, "after 'requires'")];
      decl.dependencies.push({ capability, requires });
      return true;
    }
    return false;
  });
  return decl;
}

export function parseStateEstimator(c: TokenCursor): StateEstimatorDecl {
  const loc = c.loc();
  c.expect('state_estimator', '');
  const decl: StateEstimatorDecl = { name: declName(c, 'state estimator'), inputs: [], output: null, loc };
  forEachItem(c, `to open state_estimator '${decl.name}'`, (word) => {
    c.next();
    eatSeparator(c);
    if (word.lexeme === 'inputs' || word.lexeme === 'input') {
      if (c.is('[')) decl.inputs.push(...parseNameList(c));
      else decl.inputs.push(parseDotted(c, `after '${word.lexeme}'`));
      return true;
    }
    if (word.lexeme === 'output') {
      decl.output = parseType(c);
      return true;
    }
    return false;
  });
  return decl;
}

export function parseAnomalyDetector(c: TokenCursor): AnomalyDetectorDecl {
  const loc = c.loc();
  c.expect('anomaly_detector', '');
  const decl: AnomalyDetectorDecl = { name: declName(c, 'anomaly detector'), learnedBackend: null, expected: [], loc };
  forEachItem(c, `to open anomaly_detector '${decl.name}'`, (word) => {
    if (word.lexeme === 'expected' || word.lexeme === 'expect') {
      c.next();
      decl.expected.push(readMetricRule(c));
      return true;
    }
    if (word.lexeme === 'learned') {
      c.next();
      if (c.is('backend')) c.next();
      eatSeparator(c);
      decl.learnedBackend = c.tok.type === 'string' ? String(c.next().value) : parseDotted(c, "after 'learned backend'");
      return true;
    }
    return false;
  });
  return decl;
}

/** `on anomaly DETECTOR severity SEV { ACTION; … }` (cursor on `on`). */
export function parseAnomalyHandler(c: TokenCursor): AnomalyHandlerDecl {
  const loc = c.loc();
  c.expect('on', '');
  c.expect('anomaly', "after 'on'");
  const detector = c.ident("for the detector after 'on anomaly'");
  let severity = 'Medium';
  if (c.eat('severity')) {
    eatSeparator(c);
    severity = c.ident("after 'severity'");
  }
  return { detector, severity, actions: readActionBlock(c, `to open the handler for anomaly '${detector}'`), loc };
}

/** `on <runtime fault> { stmts }` at top level (cursor on `on`). */
export function parseFaultHandler(c: TokenCursor): { event: string; body: Stmt[]; loc: { line: number; column: number } } {
  const loc = c.loc();
  c.expect('on', '');
  const event = readTextUntilBrace(c, "after 'on'", true);
  return { event, body: parseBlock(c, `to open the '${event}' handler`), loc };
}

export function parsePrognostics(c: TokenCursor): PrognosticsDecl {
  const loc = c.loc();
  c.expect('prognostics', '');
  const decl: PrognosticsDecl = { name: declName(c, 'prognostics model'), predicts: [], warnings: [], loc };
  forEachItem(c, `to open prognostics '${decl.name}'`, (word) => {
    if (word.lexeme === 'predict') {
      c.next();
      decl.predicts.push(readTextUntilSemicolon(c, true));
      return true;
    }
    if (word.lexeme === 'warn_if' || word.lexeme === 'warn') {
      decl.warnings.push(readTextUntilSemicolon(c));
      return true;
    }
    return false;
  });
  return decl;
}

export function parseResiliencePolicy(c: TokenCursor): ResiliencePolicyDecl {
  const loc = c.loc();
  c.expect('resilience_policy', '');
  const decl: ResiliencePolicyDecl = { name: declName(c, 'resilience policy'), strategies: [], loc };
  forEachItem(c, `to open resilience_policy '${decl.name}'`, (word) => {
    if (word.lexeme !== 'strategy') return false;
    c.next();
    decl.strategies.push(readTextUntilSemicolon(c, true));
    return true;
  });
  return decl;
}

/** `safety_zone N { … }` or `safety_zone N <shape tokens>;` — kept as text (inner tokens joined). */
export function parseSafetyZone(c: TokenCursor): SafetyZoneDecl {
  const loc = c.loc();
  c.expect('safety_zone', '');
  const name = declName(c, 'safety zone');
  if (c.is('{')) {
    const open = c.pos;
    const close = c.match[open]!;
    c.pos = close + 1;
    c.eat(';');
    return { name, text: joinTokens(c.tokens, open + 1, close), loc };
  }
  return { name, text: readTextUntilSemicolon(c), loc };
}
