/** A setting that does not parse: the message names the variable, and the start stops (settings.ts). */
export class SettingsError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'SettingsError';
  }
}
