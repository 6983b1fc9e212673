/**
 * `robot NAME { member* }` (docs/program-language.md §3.2, §4.1 `member`, extensions #1, #5, #6, #9, #10,
 * #14). Members the strict layer does not model are kept in `robot.generic`. A member whose
 * opening words match a strict form the analyses or the simulator read (`sensor lidar`,
 * `behavior patrol`, `safety { max_speed …`) is committed: if the rest is malformed, that is a
 * syntax error, never a generic member (the sensor or behaviour would silently disappear).
 */

import type {
  ActuatorDecl,
  AgentDecl,
  AiModelDecl,
  BehaviorDecl,
  Expr,
  MissionDecl,
  PipelineDecl,
  Quantity,
  RobotDecl,
  SafetyRule,
  SecretDecl,
  SensorDecl,
  StateMachineDecl,
  TaskDecl,
  TopicDecl,
  TriggerDecl,
  TwinDecl,
  WatchdogDecl,
} from './ast.js';
import {
  parseHealthCheck,
  parseKillSwitch,
  parseRequiresConnectivity,
  parseRequiresHardware,
  parseRequiresNetwork,
} from './declarations.js';
import { parseDotted, parseExpr, parseNameList, parseParams, parseType, readQuantity } from './expressions.js';
import { eatSeparator, findStop, forEachItem, readTextUntilBrace, readTextUntilSemicolon } from './items.js';
import { parseBlock, parseStatement, readPeriod } from './statements.js';
import type { TokenCursor } from './token-cursor.js';
import { describe } from './token-cursor.js';
import { joinCondition, joinTokens } from './token-join.js';
import { committed, genericDecl, strictOrTolerant } from './tolerant.js';
import { toHours } from './units.js';
import { emptyRobot } from './empty.js';

function endMember(c: TokenCursor, what: string): void {
  if (!c.eat(';')) c.fail(`expected ';' after ${what}, found ${describe(c.tok)}`);
}

export function parseRobot(c: TokenCursor): RobotDecl {
  const start = c.pos;
  const loc = c.loc();
  c.expect('robot', '');
  const name = c.ident("for the robot after 'robot'");
  const robot: RobotDecl = { ...emptyRobot(name, loc), doc: c.docBefore(start) };
  const open = c.pos;
  c.expect('{', `to open robot '${robot.name}'`);
  const close = c.match[open]!;
  while (c.pos < close) {
    if (c.eat(';')) continue;
    if (!c.isIdent()) c.fatal(`expected a robot member, found ${describe(c.tok)}`);
    strictOrTolerant(
      c,
      () => parseMember(c, robot),
      (s, e) => {
        robot.generic.push(genericDecl(c, s, e));
      },
    );
  }
  c.pos = close + 1;
  c.eat(';');
  return robot;
}

/**
 * `secret NAME from env("VAR");`, `secret NAME from file "path";` or `secret NAME from "literal";`.
 * The literal's text is read past and dropped: the program model never holds a secret value.
 */
function parseSecret(c: TokenCursor): SecretDecl {
  const loc = c.loc();
  c.next();
  const name = c.ident("for the secret after 'secret'");
  c.expect('from', `after secret '${name}'`);
  let source: SecretDecl['source'];
  if (c.is('env') && c.is('(', 1)) {
    c.next();
    c.next();
    if (c.tok.type !== 'string') c.fail(`expected the environment variable name as a string in env(…), found ${describe(c.tok)}`);
    source = { kind: 'env', variable: String(c.next().value) };
    c.expect(')', 'to close env(…)');
  } else if (c.is('file') && c.peek(1).type === 'string') {
    c.next();
    source = { kind: 'file', path: String(c.next().value) };
  } else if (c.tok.type === 'string') {
    c.next();
    source = { kind: 'literal' };
  } else {
    c.fail(`expected env("VAR"), file "path" or a string after 'from', found ${describe(c.tok)}`);
  }
  endMember(c, 'secret declaration');
  return { name, source, loc };
}

function parseMember(c: TokenCursor, robot: RobotDecl): void {
  const word = c.tok.lexeme;
  const loc = c.loc();
  switch (word) {
    case 'sensor':
      if (!c.isIdent(1)) break;
      robot.sensors.push(committed(() => parseSensor(c)));
      return;
    case 'actuator':
      if (!c.isIdent(1)) break;
      robot.actuators.push(committed(() => parseActuator(c)));
      return;
    case 'ai_model':
      if (!c.isIdent(1)) break;
      robot.aiModels.push(committed(() => parseAiModel(c)));
      return;
    case 'topic':
      if (!c.isIdent(1)) break;
      robot.topics.push(committed(() => parseTopic(c)));
      return;
    case 'bus': {
      c.next();
      robot.buses.push(c.ident("after 'bus'"));
      if (!c.is(';')) {
        // `bus can0: CAN { bitrate: 500000; }` — the extra configuration is not modelled.
        const stop = findStop(c, true);
        c.pos = c.tokens[stop]!.lexeme === '{' ? c.after(stop) : stop;
        c.eat(';');
        return;
      }
      endMember(c, 'bus declaration');
      return;
    }
    case 'uses':
      if (!c.is('hardware', 1)) break;
      c.next();
      c.next();
      robot.usesHardware.push(c.ident("after 'uses hardware'"));
      endMember(c, 'uses hardware');
      return;
    case 'exposes':
      c.next();
      c.eat('capabilities');
      eatSeparator(c);
      robot.exposes.push(...parseNameList(c));
      c.eat(';');
      return;
    case 'safety':
      if (!c.is('{', 1)) break;
      c.next();
      parseSafety(c, robot);
      return;
    case 'mission':
      robot.missions.push(parseMission(c));
      return;
    case 'behavior':
      if (!c.isIdent(1)) break;
      robot.behaviors.push(committed(() => parseBehavior(c)));
      return;
    case 'task':
      if (!c.isIdent(1)) break;
      robot.tasks.push(committed(() => parseTask(c)));
      return;
    case 'twin':
      if (!c.isIdent(1) || !c.is('{', 2)) break;
      robot.twins.push(parseTwin(c));
      return;
    case 'mode': {
      if (!c.isIdent(1) || !c.is('{', 2)) break;
      c.next();
      const name = c.next().lexeme;
      robot.modes.push({ name, body: parseBlock(c, `to open mode '${name}'`), loc });
      return;
    }
    case 'watchdog':
      // `watchdog NAME timeout D { … }`; other watchdog shapes (`watchdog w { … }`) stay generic.
      if (!c.isIdent(1) || !c.is('timeout', 2)) break;
      robot.watchdogs.push(committed(() => parseWatchdog(c)));
      return;
    case 'observe':
      c.next();
      forEachItem(c, "to open 'observe'", () => {
        robot.observe.push(parseDotted(c, 'for a sensor in observe'));
        return true;
      });
      return;
    case 'verify':
    case 'assert': {
      if (!c.is('{', 1)) break;
      robot.verify.push(...committed(() => parseVerifyRules(c, word)));
      return;
    }
    case 'robot':
      c.next();
      robot.peers.push(c.ident("for the peer robot after 'robot'"));
      endMember(c, 'peer robot declaration');
      return;
    case 'agent':
      if (!c.isIdent(1) || !c.is('{', 2)) break;
      robot.agents.push(parseAgent(c));
      return;
    case 'state_machine':
      robot.stateMachines.push(parseStateMachine(c));
      return;
    case 'every':
    case 'when':
    case 'on':
    case 'recover': {
      const trigger = parseTrigger(c);
      if (!trigger) break;
      robot.triggers.push(trigger);
      return;
    }
    case 'pipeline':
      if (!c.isIdent(1)) break;
      robot.pipelines.push(committed(() => parsePipeline(c)));
      return;
    case 'kill_switch':
      robot.killSwitches.push(parseKillSwitch(c));
      return;
    case 'secret':
      // `secret NAME from …;`; other shapes stay generic members.
      if (!c.isIdent(1) || !c.is('from', 2)) break;
      robot.secrets.push(committed(() => parseSecret(c)));
      return;
    case 'health_check':
      robot.healthChecks.push(parseHealthCheck(c));
      return;
    case 'permissions': {
      // Kept whole as a generic member as well; the analyses only need to know it is there.
      const start = c.pos;
      c.next();
      const stop = findStop(c, true);
      if (c.tokens[stop]!.lexeme !== '{') c.fail(`expected '{' to open permissions, found ${describe(c.tokens[stop]!)}`);
      c.pos = c.after(stop);
      c.eat(';');
      robot.hasPermissions = true;
      robot.generic.push(genericDecl(c, start, c.pos));
      return;
    }
    case 'requires_hardware':
      robot.requiresHardware = parseRequiresHardware(c);
      return;
    case 'requires_network':
      robot.requiresNetwork = parseRequiresNetwork(c);
      return;
    case 'requires_connectivity':
      robot.requiresConnectivity = parseRequiresConnectivity(c);
      return;
    case 'local_decision_authority':
    case 'requires_central_approval': {
      c.next();
      eatSeparator(c);
      const names = parseNameList(c);
      if (word === 'local_decision_authority') robot.localDecisionAuthority.push(...names);
      else robot.requiresCentralApproval.push(...names);
      c.eat(';');
      return;
    }
    default:
      break;
  }
  // Not a modelled member: the tolerant layer keeps it (strictOrTolerant catches this).
  c.fail(`unknown robot member '${word}'`);
}

/** `verify { rule; … }` / `assert { … }`: runtime assertions, checked after the body runs. */
function parseVerifyRules(c: TokenCursor, word: string): Expr[] {
  c.next();
  const open = c.pos;
  const close = c.match[open]!;
  c.next();
  const rules: Expr[] = [];
  while (c.pos < close) {
    if (c.eat(';') || c.eat(',')) continue;
    rules.push(parseExpr(c));
    if (!c.is('}')) endMember(c, `${word} rule`);
  }
  c.pos = close + 1;
  return rules;
}

// ---------------------------------------------------------------------------
// Hardware-facing members

function parseSensor(c: TokenCursor): SensorDecl {
  const loc = c.loc();
  c.expect('sensor', '');
  const name = c.ident("for the sensor after 'sensor'");
  c.expect(':', `after sensor name '${name}'`);
  const type = parseType(c);
  let driver: SensorDecl['driver'] = null;
  if (c.eat('from')) {
    // Driver clause `from vendor.model` (docs/program-language.md §4.1 "Forms added in issue 18"): exactly two parts.
    const clause = parseDotted(c, `for the driver of sensor '${name}' after 'from' (vendor.model, e.g. bosch.bno055)`);
    const dot = clause.indexOf('.');
    if (dot < 0 || clause.indexOf('.', dot + 1) >= 0) {
      c.fail(`expected the driver of sensor '${name}' as vendor.model (e.g. from bosch.bno055), found '${clause}'`, c.tokens[c.pos - 1]);
    }
    driver = { vendor: clause.slice(0, dot), model: clause.slice(dot + 1) };
  }
  let source: string | null = null;
  if (c.eat('on')) source = c.tok.type === 'string' ? String(c.next().value) : parseDotted(c, "for the sensor source after 'on'");
  if (c.is('{')) {
    // Per-sensor configuration block (`{ rate: 10 Hz; }`): not modelled.
    c.pos = c.after(c.pos);
    c.eat(';');
  } else {
    endMember(c, 'sensor declaration');
  }
  // Optional fields are present only when written, so models of older programs are unchanged.
  return { name, type, source, ...(driver ? { driver } : {}), loc };
}

function parseActuator(c: TokenCursor): ActuatorDecl {
  const loc = c.loc();
  c.expect('actuator', '');
  const name = c.ident("for the actuator after 'actuator'");
  c.expect(':', `after actuator name '${name}'`);
  const type = parseType(c);
  if (c.eat('on')) {
    if (c.tok.type === 'string') c.next();
    else parseDotted(c, "for the actuator port after 'on'");
  }
  if (c.is('{')) {
    c.pos = c.after(c.pos);
    c.eat(';');
  } else {
    endMember(c, 'actuator declaration');
  }
  return { name, type, loc };
}

/** A `key: literal;` value: Quantity for numbers, strings, booleans, identifiers; else joined text. */
function readConfigValue(c: TokenCursor): string | number | boolean | Quantity {
  const stop = findStop(c, false);
  const start = c.pos;
  const token = c.tok;
  let value: string | number | boolean | Quantity | undefined;
  if (token.type === 'string' && stop === start + 1) value = String(c.next().value);
  else if ((token.lexeme === 'true' || token.lexeme === 'false') && token.type === 'ident' && stop === start + 1) value = c.next().lexeme === 'true';
  else if (token.type === 'number' || token.type === 'unit_number' || token.lexeme === '-') {
    const q = readQuantity(c);
    value = q.unit === null ? q.value : q;
    if (c.pos !== stop) value = undefined;
  }
  if (value === undefined) value = joinCondition(c.tokens, start, stop);
  c.pos = stop;
  c.eat(';');
  return value;
}

function parseAiModel(c: TokenCursor): AiModelDecl {
  const loc = c.loc();
  c.expect('ai_model', '');
  const name = c.ident("for the model after 'ai_model'");
  c.expect(':', `after ai_model name '${name}'`);
  const type = parseType(c);
  const config: AiModelDecl['config'] = {};
  if (c.eat(';')) return { name, type, config, loc };
  forEachItem(c, `to open ai_model '${name}'`, (word) => {
    if (word.type !== 'ident' || !(c.is(':', 1) || c.is('=', 1))) return false;
    c.next();
    c.next();
    config[word.lexeme] = readConfigValue(c);
    return true;
  });
  return { name, type, config, loc };
}

function parseTopic(c: TokenCursor): TopicDecl {
  const loc = c.loc();
  c.expect('topic', '');
  const name = c.ident("for the topic after 'topic'");
  c.expect(':', `after topic name '${name}'`);
  const type = parseType(c);
  let direction: TopicDecl['direction'] = null;
  let secure = false;
  const readModifiers = (): void => {
    for (;;) {
      if (direction === null && (c.is('publish') || c.is('subscribe'))) direction = c.next().lexeme as 'publish' | 'subscribe';
      else if (!secure && c.is('secure')) {
        c.next();
        secure = true;
      } else return;
    }
  };
  readModifiers();
  // The channel clause is optional when a member block follows (docs/program-language.md §4.1 "Forms added in issue 18"):
  // `topic status: String { qos: reliable; rate: 5 Hz; }` publishes on `/status`.
  let channel: string | null = null;
  if (c.eat('on')) {
    channel = c.tok.type === 'string' ? String(c.next().value) : parseDotted(c, `for the channel of topic '${name}'`);
    readModifiers();
  } else if (!(c.is('{') || c.is('with') || c.is('qos'))) {
    c.fail(`expected 'on' before the channel of topic '${name}' (or a '{' member block), found ${describe(c.tok)}`);
  }
  const qos: TopicDecl['qos'] = {};
  const validations: string[] = [];
  if (c.is('with') || c.is('qos') || c.is('{')) {
    c.eat('with');
    if (c.is('qos') && c.is('{', 1)) c.next();
    forEachItem(c, `to open the QoS block of topic '${name}'`, (word) => {
      if (word.type === 'ident' && word.lexeme === 'validate' && !c.is(':', 1) && !c.is('=', 1)) {
        // `validate data.id matches /re/;` — kept as a string, like the policy blocks (§5.1).
        c.next();
        const stop = findStop(c, false);
        if (stop === c.pos) c.fail(`expected a rule after 'validate' in topic '${name}', found ${describe(c.tok)}`);
        validations.push(joinCondition(c.tokens, c.pos, stop));
        c.pos = stop;
        c.eat(';');
        return true;
      }
      if (word.type !== 'ident' || !(c.is(':', 1) || c.is('=', 1))) return false;
      c.next();
      c.next();
      const value = readConfigValue(c);
      qos[word.lexeme] = typeof value === 'object' ? value : typeof value === 'number' ? { value, unit: null, text: String(value) } : String(value);
      return true;
    });
    c.eat(';');
  } else {
    endMember(c, 'topic declaration');
  }
  return { name, type, direction, channel, ...(secure ? { secure } : {}), qos, ...(validations.length > 0 ? { validations } : {}), loc };
}

// ---------------------------------------------------------------------------
// Safety and missions

function parseSafety(c: TokenCursor, robot: RobotDecl): void {
  forEachItem(c, "to open 'safety'", (word) => {
    const start = c.pos;
    const loc = c.loc();
    switch (word.lexeme) {
      // The monitor enforces these rules, so a malformed one is an error, not a skipped item.
      case 'max_speed':
      case 'max_angular': {
        const kind = word.lexeme;
        return committed(() => {
          c.next();
          const separator = c.is(':') || c.is('=') ? ` ${c.next().lexeme}` : '';
          const valueToken = c.is('-') ? c.peek(1) : c.tok;
          if (valueToken.type !== 'number' && valueToken.type !== 'unit_number') {
            c.fail(`expected a number after '${kind}${separator}', found ${describe(valueToken)}`, valueToken);
          }
          const value = readQuantity(c);
          if (!c.is('}')) endMember(c, `${kind} rule`);
          robot.safety.push({ kind, value, loc });
          return true;
        });
      }
      case 'stop_if':
        return committed(() => {
          c.next();
          const condStart = c.pos;
          const condition = parseExpr(c, { after: 'stop_if', what: 'a condition' });
          const text = joinTokens(c.tokens, condStart, c.pos);
          if (!c.is('}')) endMember(c, 'stop_if rule');
          robot.safety.push({ kind: 'stop_if', condition, text, loc });
          return true;
        });
      case 'zone': {
        // `zone NAME circle|rect at …`; other zone shapes (`zone z polygon […]`) are kept generic.
        if (!c.isIdent(1) || !(c.is('circle', 2) || c.is('rect', 2))) return keepGenericSafetyRule(c, robot, start);
        return committed(() => parseZone(c, robot, start, loc));
      }
      default:
        // Other safety rules (`max_acceleration = 2 m/s2;`, `require_estop;`) are kept as generic members.
        return keepGenericSafetyRule(c, robot, start);
    }
  });
}

function keepGenericSafetyRule(c: TokenCursor, robot: RobotDecl, start: number): boolean {
  const end = findStop(c, true);
  const stopToken = c.tokens[end]!;
  c.pos = stopToken.lexeme === '{' && stopToken.type === 'punct' ? c.after(end) : end;
  c.eat(';');
  robot.generic.push(genericDecl(c, start, c.pos));
  return true;
}

/** `zone NAME circle at (x, y) radius R;` / `zone NAME rect at (x, y) size (w, h);` */
function parseZone(c: TokenCursor, robot: RobotDecl, start: number, loc: SafetyRule['loc']): boolean {
  c.next();
  const name = c.ident("for the zone after 'zone'");
  const shape = c.ident(`for the shape of zone '${name}'`);
  c.expect('at', `after 'zone ${name} ${shape}'`);
  const center = readPair(c);
  let rule: SafetyRule;
  if (shape === 'circle') {
    c.expect('radius', `after the centre of zone '${name}'`);
    const radius = parseExpr(c);
    rule = { kind: 'zone', name, shape: 'circle', center, radius, text: '', loc };
  } else if (shape === 'rect') {
    c.expect('size', `after the centre of zone '${name}'`);
    rule = { kind: 'zone', name, shape: 'rect', center, size: readPair(c), text: '', loc };
  } else {
    return c.fail(`unknown zone shape '${shape}' (expected circle or rect)`);
  }
  rule.text = joinTokens(c.tokens, start, c.pos);
  if (!c.is('}')) endMember(c, `zone '${name}'`);
  robot.safety.push(rule);
  return true;
}

function readPair(c: TokenCursor): [Expr, Expr] {
  c.expect('(', 'to open the coordinate pair');
  const a = parseExpr(c);
  c.expect(',', 'between the coordinates');
  const b = parseExpr(c);
  c.expect(')', 'to close the coordinate pair');
  return [a, b];
}

function parseMission(c: TokenCursor): MissionDecl {
  const loc = c.loc();
  c.expect('mission', '');
  const mission: MissionDecl = { name: null, durationHours: null, requiredCapabilities: [], approvals: [], steps: [], loc };
  if (c.isIdent()) mission.name = c.next().lexeme;
  else if (c.tok.type === 'string') mission.name = String(c.next().value);
  forEachItem(c, `to open mission${mission.name ? ` '${mission.name}'` : ''}`, (word) => {
    if (word.lexeme === 'duration' && (c.is(':', 1) || c.is('=', 1))) {
      c.next();
      c.next();
      mission.durationHours = toHours(readQuantity(c));
      endMember(c, 'mission duration');
      return true;
    }
    if (word.lexeme === 'requires' && c.is('capabilities', 1)) {
      c.next();
      c.next();
      eatSeparator(c);
      mission.requiredCapabilities.push(...parseNameList(c));
      c.eat(';');
      return true;
    }
    if (word.lexeme === 'requires' && c.is('approval', 1)) {
      c.next();
      c.next();
      const actor = c.ident("for the approver after 'requires approval'");
      c.expect('for', `after 'requires approval ${actor}'`);
      c.eat(':');
      const actions: string[] = [];
      if (c.is('[')) actions.push(...parseNameList(c));
      else {
        actions.push(c.ident('for an action needing approval'));
        while (c.eat(',')) actions.push(c.ident('for an action needing approval'));
      }
      mission.approvals.push({ actor, actions });
      c.eat(';');
      return true;
    }
    if (word.lexeme === 'step' && c.isIdent(1)) {
      c.next();
      mission.steps.push(readTextUntilSemicolon(c, true));
      return true;
    }
    if (word.type === 'ident' && (c.is(';', 1) || c.is('}', 1))) {
      mission.steps.push(c.next().lexeme);
      return true;
    }
    if (word.type === 'ident' && c.is('(', 1)) {
      // `navigate_to(dock);` — a step with arguments, stored by the join rule.
      mission.steps.push(readTextUntilSemicolon(c));
      return true;
    }
    return false;
  });
  return mission;
}

// ---------------------------------------------------------------------------
// Behaviours, tasks and other executable members

function parseBehavior(c: TokenCursor): BehaviorDecl {
  const loc = c.loc();
  c.expect('behavior', '');
  const name = c.ident("for the behavior after 'behavior'");
  const params = c.is('(') ? parseParams(c) : [];
  const returnType = c.eat('->') ? parseType(c) : null;
  let requires: Expr | null = null;
  let ensures: Expr | null = null;
  let invariant: Expr | null = null;
  for (;;) {
    if (c.eat('requires')) requires = parseExpr(c, { noStruct: true });
    else if (c.eat('ensures')) ensures = parseExpr(c, { noStruct: true });
    else if (c.eat('invariant')) invariant = parseExpr(c, { noStruct: true });
    else break;
  }
  const body = parseBlock(c, `to open behavior '${name}'`);
  return { name, params, returnType, requires, ensures, invariant, body, loc };
}

function parseTask(c: TokenCursor): TaskDecl {
  const loc = c.loc();
  c.expect('task', '');
  const name = c.ident("for the task after 'task'");
  // `task Monitor(x: Int) -> Status { … }` (docs/program-language.md §4.1 "Forms added in issue 18"): parameters and a
  // return type; without `every` the task is on demand (run by a call or `spawn`).
  const hasSignature = c.is('(');
  const params = hasSignature ? parseParams(c) : [];
  const returnType = c.eat('->') ? parseType(c) : null;
  let priority: string | null = null;
  if (c.eat('priority')) eatSeparator(c);
  if (!c.is('every') && !c.is('{') && !c.is('deadline') && !c.is('requires')) {
    const token = c.next();
    priority = token.type === 'string' ? String(token.value) : token.lexeme;
  }
  let every: Quantity | null = null;
  if (c.eat('every')) every = readPeriod(c, "'every'");
  else if (!hasSignature && returnType === null) c.expect('every', `after task '${name}'`);
  let deadline: Quantity | null = null;
  let jitter: Quantity | null = null;
  let requires: Expr | null = null;
  for (;;) {
    if (c.eat('deadline')) deadline = readPeriod(c, "'deadline'");
    else if (c.eat('jitter')) {
      if (!c.eat('<=')) c.eat('<');
      jitter = readPeriod(c, "'jitter <='");
    } else if (c.eat('requires')) requires = parseExpr(c, { noStruct: true });
    else if (c.eat('priority')) {
      eatSeparator(c);
      priority = c.next().lexeme;
    } else break;
  }
  if (!c.is('{')) c.fail(`expected '{' to open task '${name}', found ${describe(c.tok)}`);
  const budget: TaskDecl['budget'] = [];
  const body = parseTaskBody(c, budget);
  return { name, priority, ...(hasSignature ? { params } : {}), ...(returnType !== null ? { returnType } : {}), every, deadline, jitter, requires, budget, body, loc };
}

/** Task body statements; the first `budget { … }` block (anywhere in the body) is read into `budget`. */
function parseTaskBody(c: TokenCursor, budget: TaskDecl['budget']): TaskDecl['body'] {
  const open = c.pos;
  const close = c.match[open]!;
  c.next();
  const body: TaskDecl['body'] = [];
  let budgetRead = false;
  while (c.pos < close) {
    if (c.eat(';')) continue;
    if (c.is('budget') && c.is('{', 1)) {
      c.next();
      if (budgetRead) {
        c.pos = c.after(c.pos);
        continue;
      }
      budgetRead = true;
      forEachItem(c, 'to open the budget', (word) => {
        if (word.type !== 'ident') return false;
        c.next();
        if (!c.eat('<=') && !c.eat('<')) eatSeparator(c);
        budget.push({ resource: word.lexeme, limit: readQuantity(c) });
        return true;
      });
      continue;
    }
    body.push(parseStatement(c));
  }
  c.pos = close + 1;
  return body;
}

function parseTwin(c: TokenCursor): TwinDecl {
  const loc = c.loc();
  c.expect('twin', '');
  const twin: TwinDecl = { name: c.ident("for the twin after 'twin'"), mirror: [], replay: false, loc };
  forEachItem(c, `to open twin '${twin.name}'`, (word) => {
    if (word.lexeme === 'mirror') {
      c.next();
      eatSeparator(c);
      if (c.is('[')) twin.mirror.push(...parseNameList(c));
      else twin.mirror.push(parseDotted(c, "after 'mirror'"));
      return true;
    }
    if (word.lexeme === 'replay') {
      c.next();
      eatSeparator(c);
      twin.replay = c.is(';') || c.next().lexeme !== 'false';
      return true;
    }
    return false;
  });
  return twin;
}

function parseWatchdog(c: TokenCursor): WatchdogDecl {
  const loc = c.loc();
  c.expect('watchdog', '');
  const name = c.ident("for the watchdog after 'watchdog'");
  c.expect('timeout', `after watchdog '${name}'`);
  const timeout = readPeriod(c, "'timeout'");
  return { name, timeout, body: parseBlock(c, `to open watchdog '${name}'`), loc };
}

function parseAgent(c: TokenCursor): AgentDecl {
  const loc = c.loc();
  c.expect('agent', '');
  const agent: AgentDecl = { name: c.ident("for the agent after 'agent'"), uses: [], tools: [], goal: null, loc };
  forEachItem(c, `to open agent '${agent.name}'`, (word) => {
    switch (word.lexeme) {
      case 'uses':
        c.next();
        eatSeparator(c);
        if (c.is('[')) agent.uses.push(...parseNameList(c));
        else agent.uses.push(parseDotted(c, "after 'uses'"));
        return true;
      case 'tools':
        c.next();
        eatSeparator(c);
        agent.tools.push(...parseNameList(c));
        return true;
      case 'goal':
        c.next();
        eatSeparator(c);
        agent.goal = c.tok.type === 'string' ? String(c.next().value) : readTextUntilSemicolon(c);
        return true;
      default:
        return false; // `can [...]`, `plan { … }` and others are skipped
    }
  });
  return agent;
}

function parseStateMachine(c: TokenCursor): StateMachineDecl {
  const loc = c.loc();
  c.expect('state_machine', '');
  const machine: StateMachineDecl = { name: c.ident("for the state machine after 'state_machine'"), states: [], transitions: [], loc };
  forEachItem(c, `to open state_machine '${machine.name}'`, (word) => {
    if (word.lexeme === 'state' || word.lexeme === 'initial') {
      c.next();
      if (c.is('state')) c.next();
      machine.states.push(c.ident(`after '${word.lexeme}'`));
      if (c.is('{')) c.pos = c.after(c.pos);
      return true;
    }
    if (word.lexeme === 'transition') {
      c.next();
      const from = c.ident("after 'transition'");
      c.expect('->', `after 'transition ${from}'`);
      const to = c.ident(`after 'transition ${from} ->'`);
      machine.transitions.push({ from, to });
      const stop = findStop(c, true);
      c.pos = c.tokens[stop]!.lexeme === '{' ? c.after(stop) : stop;
      return true;
    }
    return false;
  });
  return machine;
}

function parseTrigger(c: TokenCursor): TriggerDecl | null {
  const loc = c.loc();
  const word = c.next().lexeme;
  switch (word) {
    case 'every': {
      const interval = readPeriod(c, "'every'");
      return { kind: 'every', interval, body: parseBlock(c, "to open the 'every' body"), loc };
    }
    case 'when': {
      const condition = parseExpr(c, { noStruct: true });
      return { kind: 'when', condition, body: parseBlock(c, "to open the 'when' body"), loc };
    }
    case 'on': {
      const event = readTextUntilBrace(c, "after 'on'", true);
      return { kind: 'on', event, body: parseBlock(c, `to open the '${event}' handler`), loc };
    }
    case 'recover': {
      c.expect('from', "after 'recover'");
      const failure = parseDotted(c, "after 'recover from'");
      return { kind: 'recover', failure, body: parseBlock(c, `to open the recovery for '${failure}'`), loc };
    }
    default:
      return null;
  }
}

function parsePipeline(c: TokenCursor): PipelineDecl {
  const loc = c.loc();
  c.expect('pipeline', '');
  const name = c.ident("for the pipeline after 'pipeline'");
  const budget = c.eat('budget') ? readPeriod(c, "'budget'") : null;
  return { name, budget, body: parseBlock(c, `to open pipeline '${name}'`), loc };
}
