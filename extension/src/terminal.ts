// Terminal failure detection through shell integration (stable API since VS Code 1.93): every
// command's output is read as it runs; when it exits non-zero (or with no exit code) and the server
// finds anything in it (a known failure, or at least a line that says error), a notification says what.
// The raw output goes to the server, which strips the escape sequences like any log's.
import * as vscode from 'vscode';
import { TailBuffer } from './tail';
import { DiagnosisJson, ViewRoot } from './diagnosis';

const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

export interface TerminalFailure {
  terminal: string;
  commandLine: string;
  origin: string; // the view's "From …" line: the terminal and the command's start, not all of it
  exitCode: number | undefined;
  diagnosis: DiagnosisJson;
  notice: string;
  msFromEndToNotice: number; // the command's end (shell integration event) to the notification
}

export interface TerminalDeps {
  diagnose(text: string): Promise<DiagnosisJson>;
  showDiagnosis(d: DiagnosisJson, origin: string): void;
  applyFix(root: ViewRoot): Promise<void>;
  log: vscode.LogOutputChannel;
}

export class TerminalWatcher implements vscode.Disposable {
  private readonly reads = new Map<vscode.TerminalShellExecution, Promise<string>>();
  private readonly lastOutput = new Map<vscode.Terminal, string>();
  private readonly detected = new vscode.EventEmitter<TerminalFailure>();
  readonly onDidDetectFailure = this.detected.event;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly deps: TerminalDeps) {
    this.subscriptions.push(
      vscode.window.onDidStartTerminalShellExecution((e) => this.started(e)),
      vscode.window.onDidEndTerminalShellExecution((e) => void this.ended(e)),
      vscode.window.onDidCloseTerminal((t) => this.lastOutput.delete(t)),
      this.detected,
    );
  }

  // The output of the last finished command in a terminal (escapes stripped), if integration saw it.
  outputOf(terminal: vscode.Terminal | undefined): string | undefined {
    return terminal ? this.lastOutput.get(terminal) : undefined;
  }

  private started(e: vscode.TerminalShellExecutionStartEvent): void {
    // read() only yields data written after the call, so start reading right away
    const buffer = new TailBuffer(MAX_OUTPUT_CHARS);
    const stream = e.execution.read();
    this.reads.set(e.execution, (async () => {
      for await (const chunk of stream) { buffer.push(chunk); }
      return buffer.text();
    })());
  }

  private async ended(e: vscode.TerminalShellExecutionEndEvent): Promise<void> {
    const endedAt = Date.now();
    const reading = this.reads.get(e.execution);
    this.reads.delete(e.execution);
    const output = reading ? await reading.catch(() => '') : '';
    this.lastOutput.set(e.terminal, output);
    const enabled = vscode.workspace.getConfiguration('mltriage').get<boolean>('terminal.detectFailures', true);
    if (!enabled || e.exitCode === 0) { return; }
    this.deps.log.info(`terminal command exited ${e.exitCode ?? '(no exit code)'} with ${output.length} characters of output`);
    if (!output.trim()) { return; }
    let diagnosis: DiagnosisJson;
    try {
      diagnosis = await this.deps.diagnose(output);
    } catch (err) {
      this.deps.log.warn(`could not diagnose terminal output: ${(err as Error).message}`);
      return;
    }
    const notice = diagnosis.view.notice;
    if (!notice) { return; } // nothing in the output says error
    const commandLine = e.execution.commandLine.value;
    const root = diagnosis.view.root;
    const actions = root && root.exports ? ['Show diagnosis', 'Apply fix'] : ['Show diagnosis'];
    const named = commandName(commandLine);
    const shown = root
      ? vscode.window.showErrorMessage(`mltriage: ${notice}`, ...actions)
      : vscode.window.showWarningMessage(`mltriage: "${named}" exited ${e.exitCode ?? '(no exit code)'}: ${notice}`, ...actions);
    const origin = `terminal "${e.terminal.name}", the command "${named}" (exit ${e.exitCode ?? 'code unknown'})`;
    const msFromEndToNotice = Date.now() - endedAt;
    this.deps.log.info(`terminal command failed (${e.exitCode ?? 'no exit code'}): ${commandLine} -> ${root?.signature ?? 'no known failure'}; notified ${msFromEndToNotice} ms after it ended`);
    this.detected.fire({ terminal: e.terminal.name, commandLine, origin, exitCode: e.exitCode, diagnosis, notice, msFromEndToNotice });
    const pick = await shown;
    if (pick === 'Show diagnosis') {
      this.deps.showDiagnosis(diagnosis, origin);
    } else if (pick === 'Apply fix' && root) {
      await this.deps.applyFix(root);
    }
  }

  dispose(): void { this.subscriptions.forEach((d) => d.dispose()); }
}

// A command line as a name: its first line, cut at a word boundary near 40 characters (the whole
// command is in the terminal above; a notice or the view's "From" line only has to say which).
export function commandName(commandLine: string, max = 40): string {
  const first = commandLine.trim().split('\n')[0];
  if (first.length <= max) { return first; }
  const cut = first.lastIndexOf(' ', max);
  return `${first.slice(0, cut > max / 2 ? cut : max)}…`;
}
