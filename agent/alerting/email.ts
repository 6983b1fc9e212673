import type { AlertingSettings } from '../settings/settings.js';

export interface MailResult {
  /** The SMTP server accepted the message for the recipient. */
  ok: boolean;
  /** The server's final reply (e.g. `250 OK: queued`) or the failure. */
  detail: string;
}

/**
 * Sends one alert e-mail over SMTP with nodemailer, loaded only when the first e-mail goes out so an
 * agent without an e-mail channel never holds it (docs/architecture.md, heavy libraries). A delivery
 * counts only when the server accepted the recipient (docs/operations.md § Alerting).
 */
export async function sendMail(
  smtp: AlertingSettings['smtp'] & { host: string },
  message: { to: string; subject: string; text: string },
): Promise<MailResult> {
  const nodemailer = await import('nodemailer');
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    // 465 is implicit TLS; 587 and 25 upgrade with STARTTLS when the server offers it.
    secure: smtp.port === 465,
    ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  try {
    const info = await transport.sendMail({ from: smtp.from, to: message.to, subject: message.subject, text: message.text });
    const accepted = ((info.accepted ?? []) as Array<string | { address: string }>).map((a) => (typeof a === 'string' ? a : a.address).toLowerCase());
    const ok = accepted.includes(message.to.toLowerCase()) && (info.rejected ?? []).length === 0;
    return { ok, detail: ok ? String(info.response ?? 'accepted') : `recipient not accepted: ${String(info.response ?? '')}` };
  } catch (err) {
    return { ok: false, detail: `SMTP ${smtp.host}:${smtp.port}: ${(err as Error).message}` };
  } finally {
    transport.close();
  }
}
