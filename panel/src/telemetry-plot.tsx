import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { SvcClient } from './api.js';

/** Points kept per metric: a window of the latest samples. */
const WINDOW = 600;
const COLORS = ['#2f7bd9', '#d9822f', '#3fa34d', '#b23fbf', '#c23b3b', '#6d6d6d'];

interface Series {
  metric: string;
  points: Map<number, number>;
}

/**
 * The stream starts this many telemetry items before the head (`?tail=N`, docs/streaming.md § Delivery):
 * enough recent samples to draw at once, without replaying the whole ring of a long-running agent.
 */
const TAIL = 2_000;

/**
 * A live plot of one device's numeric telemetry (`kind: 'device'` events from the WebSocket stream),
 * one line per metric. The stream starts near the latest items (TAIL), so recent samples show at once.
 */
export function TelemetryPlot({ client, deviceId }: { client: SvcClient; deviceId: string }) {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting' | 'closed'>('connecting');
  const [count, setCount] = useState(0);

  useEffect(() => {
    const series = new Map<string, Series>();
    const times: number[] = [];
    let plot: uPlot | null = null;
    let pending = false;
    let samples = 0;

    const redraw = () => {
      pending = false;
      const el = host.current;
      if (!el || series.size === 0) return;
      const metrics = [...series.values()];
      const xs = times.slice(-WINDOW);
      const data: uPlot.AlignedData = [xs, ...metrics.map((s) => xs.map((t) => s.points.get(t) ?? null))];
      if (!plot || plot.series.length !== metrics.length + 1) {
        plot?.destroy();
        plot = new uPlot(
          {
            width: Math.max(280, el.clientWidth),
            height: 220,
            scales: { x: { time: true } },
            series: [{}, ...metrics.map((s, i) => ({ label: s.metric, stroke: COLORS[i % COLORS.length], spanGaps: true, width: 1.5 }))],
          },
          data,
          el,
        );
      } else {
        plot.setData(data);
      }
      setCount(samples);
    };

    const stream = client.stream({
      tail: TAIL,
      onOpen: () => setState('live'),
      onClose: ({ willReconnect }) => setState(willReconnect ? 'reconnecting' : 'closed'),
      onTelemetry: (event) => {
        if (event.kind !== 'device' || event['device_id'] !== deviceId) return;
        const value = event['value'];
        const metric = String(event['metric'] ?? 'value');
        if (typeof value !== 'number' || !Number.isFinite(value)) return;
        const t = Number(event['timestamp_ms'] ?? Date.now()) / 1000;
        let s = series.get(metric);
        if (!s) series.set(metric, (s = { metric, points: new Map() }));
        s.points.set(t, value);
        if (times[times.length - 1] !== t) times.push(t);
        if (times.length > WINDOW * 2) {
          const dropped = times.splice(0, times.length - WINDOW);
          for (const x of dropped) for (const ser of series.values()) ser.points.delete(x);
        }
        samples += 1;
        if (!pending) {
          pending = true;
          window.requestAnimationFrame(redraw);
        }
      },
    });
    stream.ready.catch(() => undefined);
    return () => {
      stream.close();
      plot?.destroy();
    };
  }, [client, deviceId]);

  return (
    <div class="plot">
      <p class="muted">
        Live telemetry · <span data-testid="stream-state">{state}</span> · <span data-testid="sample-count">{count}</span> samples
      </p>
      <div ref={host} data-testid="telemetry-plot" />
      {count === 0 && <p class="muted">No numeric telemetry from this device yet.</p>}
    </div>
  );
}
