/** Small readers of the resolved configuration tree shared by the fleet views. */

/** `tree[key]` when it is a table, else an empty one. */
export function table(tree: Record<string, unknown> | undefined, key: string): Record<string, unknown> {
  const v = tree?.[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** The entries of `t` named in `keys` that are set, in the order of `keys`. */
export function pick(t: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => t[k] !== undefined).map((k) => [k, t[k]]));
}
