/**
 * Ids made only of these characters sort by code unit exactly as `localeCompare` sorts them (the ICU
 * root order puts `-`, `.` and `/` before digits before letters, as ASCII does; `_`, `:` and capitals
 * would differ). test/core/id-order.test.ts checks the equality on random ids.
 */
const CODE_UNIT_SAFE = /^[0-9a-z./-]*$/;

/**
 * `a.localeCompare(b)`, without ICU for the ids devices usually have. The first `localeCompare` of a
 * process maps the ICU collation data, about 2.5 MiB of resident memory, and `GET /v1/devices` sorts
 * by id on every call (README.md § Benchmarks: idle RSS with 32 devices). The order is unchanged:
 * a pair of plain ids compares by code unit, which gives the same sign; any other pair asks ICU.
 */
export function compareIds(a: string, b: string): number {
  if (CODE_UNIT_SAFE.test(a) && CODE_UNIT_SAFE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return a.localeCompare(b);
}
