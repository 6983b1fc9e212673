/**
 * Runtime values and scopes. Numbers are SI (see si-units.ts); records are plain objects;
 * declared robot entities (sensors, actuators, topics, AI models) are reference objects so a
 * method call on them reaches the simulated robot.
 */
import type { ActuatorDecl, AiModelDecl, SensorDecl, TopicDecl } from '../language/ast.js';

export class SensorRef {
  constructor(readonly decl: SensorDecl) {}
}
export class ActuatorRef {
  constructor(readonly decl: ActuatorDecl) {}
}
export class TopicRef {
  constructor(readonly decl: TopicDecl) {}
}
export class ModelRef {
  constructor(readonly decl: AiModelDecl) {}
}
/** A named callable: built-ins, behaviors, module functions. */
export class CallableRef {
  constructor(
    readonly name: string,
    readonly invoke: (args: ArgValue[]) => Value,
  ) {}
}
/** `Name` of an enum, struct or other declared type; members yield `Name.Member` strings. */
export class TypeRef {
  constructor(readonly name: string) {}
}

export type RefValue = SensorRef | ActuatorRef | TopicRef | ModelRef | CallableRef | TypeRef;
export type Value = number | string | boolean | null | Value[] | RecordValue | RefValue;
export interface RecordValue {
  [key: string]: Value;
}

export interface ArgValue {
  name: string | null;
  value: Value;
}

export function isRecord(value: Value | undefined): value is RecordValue {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function truthy(value: Value): boolean {
  if (value === null || value === false || value === 0 || value === '') return false;
  return true;
}

/** A short rendering for logs and messages. */
export function describeValue(value: Value): string {
  if (value === null) return 'void';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(describeValue).join(', ')}]`;
  if (value instanceof SensorRef || value instanceof ActuatorRef || value instanceof TopicRef || value instanceof ModelRef) {
    return value.decl.name;
  }
  if (value instanceof CallableRef || value instanceof TypeRef) return value.name;
  return JSON.stringify(toJson(value));
}

/** Values as JSON (refs by name), for payloads and results. */
export function toJson(value: Value): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toJson);
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = toJson(value[key]!);
    return out;
  }
  return describeValue(value);
}

/** Lexical scopes: a `let` binds in the innermost scope, lookups walk outward. */
export class Environment {
  private readonly vars = new Map<string, Value>();
  constructor(readonly parent: Environment | null = null) {}

  child(): Environment {
    return new Environment(this);
  }

  define(name: string, value: Value): void {
    this.vars.set(name, value);
  }

  has(name: string): boolean {
    return this.vars.has(name) || (this.parent?.has(name) ?? false);
  }

  get(name: string): Value | undefined {
    if (this.vars.has(name)) return this.vars.get(name);
    return this.parent?.get(name);
  }

  /** Assign to the nearest scope that defines `name`; false when none does. */
  assign(name: string, value: Value): boolean {
    if (this.vars.has(name)) {
      this.vars.set(name, value);
      return true;
    }
    return this.parent?.assign(name, value) ?? false;
  }
}
