/** Parses `host:port`, `[v6]:port` or `:port` (loopback) into its parts; a bad value is a clear error. */
export function parseBindAddress(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  if (!m) throw new Error(`invalid bind address '${value}': expected host:port`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid bind address '${value}': port out of range`);
  const host = m[1] ?? (m[2] === '' ? '127.0.0.1' : m[2]!);
  return { host, port };
}

export function formatBindAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
