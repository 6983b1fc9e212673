/** Code-unit order (digest §0.2: "sorted by id", the same on every run and platform). */
export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
export const byId = (a: { id: string }, b: { id: string }): number => cmp(a.id, b.id);
