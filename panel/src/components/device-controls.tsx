import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, type SvcClient } from '../api.js';

/** Well-known commands of the firmware bridge (firmware-bridge/messages.ts `CommandId`), offered as suggestions. */
const KNOWN_COMMANDS = ['identify', 'read_telemetry', 'clear_faults', 'set_telemetry_period', 'reboot'];

/** Parses the params box: empty means none; anything else must be a JSON object. */
export function parseParams(text: string): { ok: true; value: Record<string, unknown> | undefined } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `Params are not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'Params must be a JSON object, e.g. {"seconds": 2}' };
  return { ok: true, value: value as Record<string, unknown> };
}

interface CommandAnswer {
  ok: boolean;
  command: string;
  ack: { status: string; detail: string | null };
}

/**
 * `POST /v1/devices/{id}/command` (Operate): a command name and optional JSON params, checked here
 * before anything is sent; shows the device's acknowledgement (docs/devices.md § Reaching devices).
 */
export function DeviceCommand({ client, deviceId }: { client: SvcClient; deviceId: string }) {
  const [name, setName] = useState('identify');
  const [params, setParams] = useState('');
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<CommandAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const parsed = parseParams(params);

  const send = async (e: Event) => {
    e.preventDefault();
    if (!parsed.ok || name.trim() === '') return;
    setBusy(true);
    setError(null);
    setAnswer(null);
    try {
      setAnswer((await client.commandDevice(deviceId, { name: name.trim(), ...(parsed.value ? { args: parsed.value } : {}) })) as CommandAnswer);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="device-form" data-testid="command-form" onSubmit={send}>
      <h4>Command</h4>
      <label>
        Name
        <input name="command-name" list="known-commands" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required />
      </label>
      <datalist id="known-commands">
        {KNOWN_COMMANDS.map((c) => (
          <option key={c} value={c} />
        ))}
      </datalist>
      <label>
        Params (JSON object, optional)
        <textarea name="command-params" rows={2} placeholder='{"seconds": 2}' value={params} onInput={(e) => setParams((e.target as HTMLTextAreaElement).value)} />
      </label>
      {!parsed.ok && (
        <p class="error" data-testid="command-json-error">
          {parsed.error}
        </p>
      )}
      <button type="submit" disabled={busy || !parsed.ok || name.trim() === ''}>
        {busy ? 'Sending…' : 'Send command'}
      </button>
      {error && (
        <p class="error" role="alert" data-testid="command-error">
          {error}
        </p>
      )}
      {answer && (
        <p data-testid="command-answer" class={answer.ok ? 'answer ok' : 'answer bad'}>
          <strong>{answer.command}</strong>: <span data-testid="command-status">{answer.ack.status}</span>
          {answer.ack.detail ? ` — ${answer.ack.detail}` : ''}
        </p>
      )}
    </form>
  );
}

interface FirmwareAnswer {
  ok: boolean;
  outcome: { result: string; version: string | null; detail: string };
  firmware_version: string | null;
  duration_ms?: number;
}

interface Progress {
  phase: string;
  sent: number;
  total: number;
  events: number;
}

/** The bytes of a picked file as base64 (the route's `image_base64`), without the data-URL prefix. */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('could not read the file'));
    reader.readAsDataURL(file);
  });
}

/** The route takes at most 8 MiB of base64 (api/domains/devices.ts), i.e. 6 MiB of image. */
const MAX_IMAGE_BYTES = 6 * 1024 * 1024;

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * `POST /v1/devices/{id}/firmware` (Deploy) from a picked file. Progress is the device's own:
 * `firmware_update_progress` platform events on the stream (bytes the device acknowledged), read from
 * a stream opened at its head (`tail: 0`) before the upload starts (docs/devices.md § Firmware update progress).
 */
export function FirmwareUpdate({ client, deviceId, onDone }: { client: SvcClient; deviceId: string; onDone?: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [version, setVersion] = useState('');
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [answer, setAnswer] = useState<FirmwareAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const stopStream = useRef<(() => void) | null>(null);
  useEffect(() => () => stopStream.current?.(), []);

  const versionOk = SEMVER.test(version.trim());
  const tooBig = file !== null && file.size > MAX_IMAGE_BYTES;

  const flash = async (e: Event) => {
    e.preventDefault();
    if (!file || !versionOk || tooBig) return;
    const wanted = version.trim();
    setBusy(true);
    setError(null);
    setAnswer(null);
    setProgress({ phase: 'reading file', sent: 0, total: file.size, events: 0 });
    stopStream.current?.();
    let sawDone!: () => void;
    const done = new Promise<void>((resolve) => (sawDone = resolve));
    let events = 0;
    const stream = client.stream({
      tail: 0,
      onTelemetry: (ev) => {
        if (ev.kind !== 'platform' || ev['event_type'] !== 'firmware_update_progress' || ev['entity_id'] !== deviceId) return;
        const p = (ev['payload'] ?? {}) as Record<string, unknown>;
        if (p['version'] !== wanted) return;
        events += 1;
        // The `done` event carries the result, not a byte count: the bar keeps the last acknowledged one.
        setProgress((prev) => ({
          phase: String(p['phase'] ?? ''),
          sent: typeof p['sent_bytes'] === 'number' ? p['sent_bytes'] : prev?.sent ?? 0,
          total: typeof p['total_bytes'] === 'number' ? p['total_bytes'] : file.size,
          events,
        }));
        if (p['phase'] === 'done') sawDone();
      },
    });
    stopStream.current = () => stream.close();
    try {
      // Progress only counts once the stream is live: events published before it was are not replayed (tail 0).
      await Promise.race([stream.ready, new Promise((r) => setTimeout(r, 3000))]);
      const image = await readBase64(file);
      setProgress((p) => (p && p.events === 0 ? { ...p, phase: 'uploading' } : p));
      const r = (await client.updateDeviceFirmware(deviceId, { version: wanted, image_base64: image })) as FirmwareAnswer;
      // The last events may trail the answer by a moment; wait for the `done` one, briefly.
      await Promise.race([done, new Promise((res) => setTimeout(res, 2000))]);
      setAnswer(r);
      onDone?.();
    } catch (err) {
      setError(describeError(err));
    } finally {
      stream.close();
      stopStream.current = null;
      setBusy(false);
    }
  };

  const pct = progress && progress.total > 0 ? Math.round((progress.sent / progress.total) * 100) : 0;
  return (
    <form class="device-form" data-testid="firmware-form" onSubmit={flash}>
      <h4>Firmware update</h4>
      <label>
        Image
        <input name="firmware-file" type="file" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
      </label>
      <label>
        Version
        <input name="firmware-version" placeholder="1.2.3" value={version} onInput={(e) => setVersion((e.target as HTMLInputElement).value)} />
      </label>
      {version.trim() !== '' && !versionOk && <p class="error">The version must be semantic (1.2.3).</p>}
      {tooBig && <p class="error">The image is larger than the agent accepts ({(MAX_IMAGE_BYTES / 1024 / 1024).toFixed(0)} MiB).</p>}
      <button type="submit" disabled={busy || !file || !versionOk || tooBig}>
        {busy ? 'Flashing…' : 'Flash firmware'}
      </button>
      {progress && (
        <div class="fw-progress">
          <progress data-testid="fw-progress" max={progress.total || 1} value={progress.sent} data-sent={progress.sent} data-events={progress.events} />
          <span class="muted">
            <span data-testid="fw-phase">{progress.phase}</span> · {progress.sent.toLocaleString()} / {progress.total.toLocaleString()} bytes ({pct} %)
          </span>
        </div>
      )}
      {error && (
        <p class="error" role="alert" data-testid="firmware-error">
          {error}
        </p>
      )}
      {answer && (
        <p data-testid="firmware-outcome" class={answer.ok ? 'answer ok' : 'answer bad'}>
          <strong data-testid="firmware-result">{answer.outcome.result}</strong> · device runs{' '}
          <span data-testid="firmware-version">{answer.firmware_version ?? answer.outcome.version ?? '—'}</span>
          {typeof answer.duration_ms === 'number' ? ` · ${(answer.duration_ms / 1000).toFixed(1)} s` : ''}
          {answer.outcome.detail ? ` · ${answer.outcome.detail}` : ''}
        </p>
      )}
    </form>
  );
}
