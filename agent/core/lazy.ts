/**
 * A service built on its first use rather than at start: its code is a separate chunk of the bundle
 * (a dynamic import inside `load`), so an agent nobody asks about recovery, the mesh or chaos never
 * loads, parses or holds it (README § Benchmarks: cold start and idle memory). Concurrent first
 * calls share one load; a failed load is retried by the next call.
 */
export interface Lazy<T> {
  get(): Promise<T>;
  /** The service when some call has loaded it, else null (closing what was never opened is a no-op). */
  loaded(): T | null;
}

export function lazy<T>(load: () => Promise<T>): Lazy<T> {
  let pending: Promise<T> | null = null;
  let value: T | null = null;
  return {
    get() {
      pending ??= load().then(
        (v) => (value = v),
        (err: unknown) => {
          pending = null;
          throw err;
        },
      );
      return pending;
    },
    loaded: () => value,
  };
}
