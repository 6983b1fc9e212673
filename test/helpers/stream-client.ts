import WebSocket from 'ws';

export interface StreamClient {
  ws: WebSocket;
  frames: any[];
  waitFor(pred: (f: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): void;
}

/** A real WebSocket client of the telemetry stream that records every frame. */
export async function openStream(wsUrl: string, headers: Record<string, string> = {}): Promise<StreamClient> {
  const ws = new WebSocket(`${wsUrl}/v1/stream/telemetry`, { headers });
  const frames: any[] = [];
  const waiters: Array<{ pred: (f: any) => boolean; resolve: (f: any) => void }> = [];
  ws.on('message', (data) => {
    const f = JSON.parse(String(data));
    frames.push(f);
    for (const w of [...waiters]) {
      if (w.pred(f)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(f);
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    waitFor(pred, timeoutMs = 10_000) {
      const hit = frames.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching frame within ${timeoutMs} ms; last: ${JSON.stringify(frames.slice(-3))}`)), timeoutMs);
        waiters.push({ pred, resolve: (f) => (clearTimeout(timer), resolve(f)) });
      });
    },
    close: () => ws.close(),
  };
}

export async function eventually<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await fn();
    if (ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
