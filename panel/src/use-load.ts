import { useCallback, useEffect, useState } from 'preact/hooks';
import { describeError } from './api.js';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  reload: () => void;
}

/** Runs `load` on mount (and every `intervalMs` when given); keeps the last answer and the last error. */
export function useLoad<T>(load: () => Promise<T>, intervalMs?: number): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => live && (setData(d), setError(null)),
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [tick]);
  useEffect(() => {
    if (!intervalMs) return;
    const t = window.setInterval(reload, intervalMs);
    return () => window.clearInterval(t);
  }, [intervalMs]);
  return { data, error, reload };
}

export function formatTime(ms: number | null | undefined): string {
  return typeof ms === 'number' ? new Date(ms).toLocaleString() : '—';
}

/** Time of day only, for dense tables (the date is today's for anything live). */
export function formatClock(ms: number | null | undefined): string {
  return typeof ms === 'number' ? new Date(ms).toLocaleTimeString() : '—';
}
