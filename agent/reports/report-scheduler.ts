/**
 * The report delivery scheduler (`SVC_REPORT_SCHEDULE_INTERVAL_SECS`, docs/operations.md § Reports):
 * every interval, delivers the due schedules. Off when the interval is 0. One tick at a time; the
 * timer never keeps the process alive, and `stop()` waits for a tick under way.
 */
export class ReportScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly intervalSecs: number,
    private readonly tick: () => Promise<unknown>,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    if (this.intervalSecs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.runOnce(), this.intervalSecs * 1000);
    this.timer.unref();
  }

  /** Runs a tick unless one is still under way (a slow destination never stacks ticks). */
  runOnce(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.tick()
      .then(() => undefined)
      .catch((err: unknown) => this.log(`report scheduler: tick failed: ${(err as Error).message}`))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
