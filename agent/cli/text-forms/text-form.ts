/**
 * The human form of an operation's answer on the terminal (`svc <command>`; `--json` prints the REST
 * body instead). `passed` decides the exit code like the program commands: 0 passed, 1 not
 * (docs/program-language.md §29); a form without it always exits 0.
 */
export interface TextForm<B = any> {
  text(body: B): string;
  passed?(body: B): boolean;
}
