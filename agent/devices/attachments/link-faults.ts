/**
 * Fault injection at the attachment layer (chaos experiments, docs/devices.md § Actions): what the
 * agent's receive and send paths do to one device's traffic while a fault is set. Transport-free:
 * attachments pass their frames or chunks through it.
 */

/** A fault on one device's link: drop everything, or corrupt a share of the frames. */
export interface LinkFault {
  /** Discard every frame both ways (the cable is cut). */
  drop: boolean;
  /** Share (0–1) of frames corrupted (line noise). */
  corruptShare: number;
}

export interface LinkFaultStats {
  /** The fault in force, or null. */
  active: LinkFault | null;
  dropped_in: number;
  dropped_out: number;
  corrupted_in: number;
  corrupted_out: number;
}

/** Flips one byte of `bytes[from, to)` (never to 0: COBS frames end at a zero) in place. */
function flipOne(bytes: Uint8Array, from: number, to: number): void {
  const i = from + Math.floor((to - from) / 2);
  const b = bytes[i]!;
  bytes[i] = b ^ 0x20 || b ^ 0x40;
}

export class LinkFaultInjector {
  private fault: LinkFault | null = null;
  private readonly counters = { dropped_in: 0, dropped_out: 0, corrupted_in: 0, corrupted_out: 0 };

  constructor(private readonly random: () => number = Math.random) {}

  set(fault: LinkFault | null): void {
    this.fault = fault && (fault.drop || fault.corruptShare > 0) ? { drop: fault.drop, corruptShare: Math.min(1, Math.max(0, fault.corruptShare)) } : null;
  }

  get active(): LinkFault | null {
    return this.fault;
  }

  stats(): LinkFaultStats {
    return { active: this.fault, ...this.counters };
  }

  private hit(): boolean {
    return this.fault !== null && this.fault.corruptShare > 0 && this.random() < this.fault.corruptShare;
  }

  /**
   * Bytes received from a byte stream of 0x00-delimited frames (COBS): null when dropped, else the
   * bytes with the chosen share of frames corrupted (a copy; the caller's buffer is left alone).
   */
  inboundBytes(chunk: Uint8Array): Uint8Array | null {
    if (!this.fault) return chunk;
    if (this.fault.drop) {
      this.counters.dropped_in++;
      return null;
    }
    const out = Uint8Array.from(chunk);
    let start = 0;
    for (let i = 0; i <= out.length; i++) {
      if (i < out.length && out[i] !== 0) continue;
      if (i > start && this.hit()) {
        flipOne(out, start, i);
        this.counters.corrupted_in++;
      }
      start = i + 1;
    }
    return out;
  }

  /** One whole encoded frame about to be sent: null when dropped, else the frame, corrupted or not. */
  outboundFrame(frame: Uint8Array): Uint8Array | null {
    if (!this.fault) return frame;
    if (this.fault.drop) {
      this.counters.dropped_out++;
      return null;
    }
    if (!this.hit()) return frame;
    const out = Uint8Array.from(frame);
    // The trailing 0x00 is the delimiter: corrupt the body.
    flipOne(out, 0, Math.max(1, out.length - 1));
    this.counters.corrupted_out++;
    return out;
  }

  /**
   * A message-level transport (CAN frames, MQTT messages) where a corrupted frame never reaches the
   * protocol (the CAN controller's CRC, TCP) and is simply lost: whether to pass it.
   */
  passes(direction: 'in' | 'out'): boolean {
    if (!this.fault) return true;
    if (this.fault.drop) {
      this.counters[direction === 'in' ? 'dropped_in' : 'dropped_out']++;
      return false;
    }
    if (!this.hit()) return true;
    this.counters[direction === 'in' ? 'corrupted_in' : 'corrupted_out']++;
    return false;
  }
}
