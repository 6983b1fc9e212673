/**
 * Deep merge used by the configuration resolver (docs/configuration.md § The project manifest).
 *
 * - Tables merge key by key; the later value wins for scalars and type mismatches.
 * - Arrays follow the strategy configured for their key (`[merge]`), else the
 *   default: `robots` and `devices` use `merge_by_id`, every other key `replace`.
 * - Inputs are never mutated; the result shares no tables or arrays with them.
 */

export type MergeStrategy = 'replace' | 'append' | 'merge_by_id';

export const MERGE_STRATEGIES: readonly MergeStrategy[] = ['replace', 'append', 'merge_by_id'];

/** Array keys that default to `merge_by_id`. */
export const MERGE_BY_ID_KEYS: ReadonlySet<string> = new Set(['robots', 'devices']);

export type Table = Record<string, unknown>;

export interface MergeOptions {
  /**
   * Strategies keyed either by the array's leaf key (`devices`) or by its dotted
   * path from the tree root (`fleet.robots`). The dotted path wins over the leaf key.
   */
  strategies?: Readonly<Record<string, MergeStrategy>>;
}

export function isMergeStrategy(value: unknown): value is MergeStrategy {
  return typeof value === 'string' && (MERGE_STRATEGIES as readonly string[]).includes(value);
}

/** A table as produced by TOML/JSON parsing: plain or null-prototype object. */
export function isTable(value: unknown): value is Table {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Assign an own property safely (a literal `__proto__` key stays a plain key). */
export function setOwn(target: Table, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** Deep copy of tables and arrays; other values (strings, numbers, dates) are shared. */
export function cloneValue<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => cloneValue(item)) as T;
  if (isTable(value)) {
    const out: Table = {};
    for (const [key, item] of Object.entries(value)) setOwn(out, key, cloneValue(item));
    return out as T;
  }
  return value;
}

export function strategyFor(path: readonly string[], options: MergeOptions): MergeStrategy {
  const key = path[path.length - 1] ?? '';
  const strategies = options.strategies ?? {};
  const dotted = path.join('.');
  if (Object.prototype.hasOwnProperty.call(strategies, dotted)) return strategies[dotted]!;
  if (Object.prototype.hasOwnProperty.call(strategies, key)) return strategies[key]!;
  return MERGE_BY_ID_KEYS.has(key) ? 'merge_by_id' : 'replace';
}

/** Merge `source` over `target` and return a new table. */
export function deepMerge(target: Table, source: Table, options: MergeOptions = {}): Table {
  return mergeTables(target, source, [], options);
}

function mergeTables(target: Table, source: Table, path: readonly string[], options: MergeOptions): Table {
  const out = cloneValue(target);
  for (const [key, value] of Object.entries(source)) {
    const current = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    setOwn(out, key, mergeValues(current, value, [...path, key], options));
  }
  return out;
}

function mergeValues(current: unknown, incoming: unknown, path: readonly string[], options: MergeOptions): unknown {
  if (isTable(current) && isTable(incoming)) return mergeTables(current, incoming, path, options);
  if (Array.isArray(current) && Array.isArray(incoming)) {
    switch (strategyFor(path, options)) {
      case 'append':
        return [...current.map((v) => cloneValue(v)), ...incoming.map((v) => cloneValue(v))];
      case 'merge_by_id':
        return mergeById(current, incoming, path, options);
      case 'replace':
        return cloneValue(incoming);
    }
  }
  return cloneValue(incoming);
}

function idOf(item: unknown): string | null {
  if (!isTable(item)) return null;
  const id = item['id'];
  if (typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint') return `${typeof id}:${String(id)}`;
  return null;
}

/**
 * Arrays of tables merged on `id`: the existing order is kept, incoming tables
 * whose id is already present are deep-merged into the first table with that id,
 * the rest (new ids, items without an id, non-tables) are appended in order.
 * Duplicates inside one array are left as written (validation reports them).
 */
function mergeById(current: unknown[], incoming: unknown[], path: readonly string[], options: MergeOptions): unknown[] {
  const out = current.map((item) => cloneValue(item));
  const index = new Map<string, number>();
  out.forEach((item, i) => {
    const id = idOf(item);
    if (id !== null && !index.has(id)) index.set(id, i);
  });
  for (const item of incoming) {
    const id = idOf(item);
    const at = id === null ? undefined : index.get(id);
    if (at !== undefined && isTable(item)) {
      out[at] = mergeTables(out[at] as Table, item, path, options);
    } else {
      out.push(cloneValue(item));
    }
  }
  return out;
}
