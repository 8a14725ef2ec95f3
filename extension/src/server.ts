// Owns the language client: starts the bundled Python server, restarts it (coalesced) when the
// interpreter, the settings or Workspace Trust change, and reports problems in words.
import * as vscode from 'vscode';
import * as path from 'path';
import * as readline from 'readline';
import type { Readable } from 'stream';
import {
  CloseAction, CloseHandlerResult, ErrorAction, ErrorHandler, LanguageClient, LanguageClientOptions, ServerOptions, State,
} from 'vscode-languageclient/node';
import { findInterpreter, readPythonFacts, versionProblem } from './python';

// Every file and untitled document is synced: the server decides which are logs (its LOG_SUFFIXES and
// the `log` language) and reads open launch scripts from the editor, never a stale copy on disk.
export const DOCUMENT_SELECTOR = [{ scheme: 'file' }, { scheme: 'untitled' }];

// The server logs "LEVEL logger: message" lines to stderr (server/mltriage/lsp/__init__.py); each
// goes to the output channel at its own level, not all as errors. Other lines (a traceback's)
// continue the last record.
const SERVER_LOG_LINE = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;

// vscode-languageclient restarts a server whose connection closed (up to 4 times in 3 minutes) and
// says so only in the output channel; the user then sees squiggles vanish and come back without a
// word. These say it in a notification, the restart and the giving up alike.
const RESTART_LIMIT = 4;
export const RESTARTED = 'The mltriage language server stopped unexpectedly and was restarted: diagnostics of open logs come back as they are diagnosed again. The "mltriage" output channel has what the server said last.';
export const NOT_RESTARTED = `The mltriage language server stopped unexpectedly ${RESTART_LIMIT + 1} times in 3 minutes and was not restarted again. The "mltriage" output channel has what it said last.`;

function pipeServerLog(input: Readable, log: vscode.LogOutputChannel): void {
  let level = 'ERROR';
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on('line', (line) => {
    const m = SERVER_LOG_LINE.exec(line);
    if (m) { level = m[1]; }
    const text = m ? m[2] : line;
    if (level === 'DEBUG') { log.debug(text); } else if (level === 'INFO') { log.info(text); } else if (level === 'WARNING') { log.warn(text); } else { log.error(text); }
  });
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private pending: Promise<void> = Promise.resolve();
  private restartTimer: NodeJS.Timeout | undefined;
  readonly notices: string[] = []; // what the user was told about the server, for the tests (`MltriageApi`)
  private readonly changed = new vscode.EventEmitter<LanguageClient | undefined>();
  readonly onDidChangeClient = this.changed.event;

  constructor(private readonly context: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {}

  get current(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  // A client that is running, or a clear error that says why there is none.
  async ready(): Promise<LanguageClient> {
    await this.pending;
    if (!this.current) { throw new Error('The mltriage server is not running: see the "mltriage" output channel.'); }
    return this.current;
  }

  async executeCommand<T>(command: string, ...args: unknown[]): Promise<T> {
    const client = await this.ready();
    return client.sendRequest('workspace/executeCommand', { command, arguments: args }) as Promise<T>;
  }

  start(): Promise<void> {
    this.pending = this.pending.then(() => this.stopClient()).then(() => this.startClient());
    return this.pending;
  }

  // Several triggers in a row (settings + interpreter) restart once.
  scheduleRestart(reason: string): void {
    this.log.info(`restart requested: ${reason}`);
    if (this.restartTimer) { clearTimeout(this.restartTimer); }
    this.restartTimer = setTimeout(() => { this.restartTimer = undefined; void this.start(); }, 500);
  }

  private async startClient(): Promise<void> {
    const t0 = Date.now();
    const interpreter = await findInterpreter(this.log);
    // The interpreter's facts are read after the server's start, not before or beside it (a Python
    // start of their own, 0.3-2.8 s through a pyenv shim on a busy machine, that competed with the
    // server's for the CPU: issue 22.5); they explain a failed start in words (start.py also refuses
    // Python < 3.11) and name the interpreter in the output channel.
    const readFacts = () => readPythonFacts(interpreter.command).then(
      (facts) => {
        this.log.info(`Python ${facts.version.join('.')} at ${facts.executable} (from ${interpreter.origin}; read in ${Date.now() - t0} ms)`);
        return versionProblem(facts);
      },
      (err: Error) => `mltriage could not start Python (${interpreter.command}, from ${interpreter.origin}): ${err.message}`);

    const startScript = this.context.asAbsolutePath(path.join('extension', 'tool', 'start.py'));
    const cacheDir = path.join(this.context.globalStorageUri.fsPath, 'cache');
    const config = vscode.workspace.getConfiguration('mltriage');
    const serverOptions: ServerOptions = {
      command: interpreter.command,
      // -I: ignore PYTHONPATH and the user site, so the bundled packages are the ones imported
      args: ['-I', startScript],
      options: { env: { ...process.env, MLTRIAGE_CACHE_DIR: cacheDir, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.log,
      stdioOptions: {
        stdout: (input) => pipeServerLog(input, this.log),
        stderr: (input) => pipeServerLog(input, this.log),
      },
      // the hover's "Open the full entry" link runs this one command; nothing else is trusted
      markdown: { isTrusted: { enabledCommands: ['mltriage.showEntry'] }, supportHtml: false },
      initializationOptions: {
        trusted: vscode.workspace.isTrusted,
        revealEdits: true, // script fixes come as our command: opened, inserted unsaved, shown
        debounceMs: config.get<number>('diagnostics.debounceMs', 300),
        progressLines: config.get<number>('diagnostics.progressLines', 20000),
      },
    };
    let restarts: ErrorHandler | undefined; // the library's own policy, made once the client exists
    const policy = () => (restarts ??= client.createDefaultErrorHandler(RESTART_LIMIT));
    clientOptions.errorHandler = {
      // A write to a server that just died fails (EPIPE) before its close is seen; the stream's own error
      // comes without a count, and the library's policy shuts the client down on it, so the close that
      // follows is never offered a restart. Such an error waits for the close, which decides.
      error: (error, message, count) => (count === undefined ? { action: ErrorAction.Continue } : policy().error(error, message, count)),
      closed: async (): Promise<CloseHandlerResult> => {
        const decided = await policy().closed();
        const restart = decided.action === CloseAction.Restart;
        this.notify(restart ? RESTARTED : NOT_RESTARTED, restart ? 'Show Output' : 'Restart Server');
        return { action: decided.action, message: restart ? RESTARTED : NOT_RESTARTED, handled: true };
      },
    };
    const client = new LanguageClient('mltriage', 'mltriage', serverOptions, clientOptions);
    const t1 = Date.now();
    try {
      await client.start();
      this.client = client;
      this.changed.fire(client);
      this.log.info(`server started in ${Date.now() - t1} ms (${Date.now() - t0} ms with the interpreter): ${JSON.stringify(client.initializeResult?.serverInfo)}`);
      void readFacts().then((problem) => { if (problem) { this.log.warn(problem); } });
    } catch (err) {
      this.fail(await readFacts() ?? `The mltriage server failed to start: ${(err as Error).message}`);
      await client.dispose().catch(() => undefined);
    }
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.changed.fire(undefined);
      try { await client.stop(5000); } catch (err) { this.log.warn(`server did not stop cleanly: ${err}`); }
    }
  }

  // A notice about the server's own state, with one action: the output channel, or a restart.
  private notify(message: string, action: 'Show Output' | 'Restart Server'): void {
    this.notices.push(message);
    this.log.error(message);
    const show = action === 'Show Output' ? vscode.window.showWarningMessage : vscode.window.showErrorMessage;
    void show(message, action).then((pick) => {
      if (pick === 'Show Output') { this.log.show(true); }
      if (pick === 'Restart Server') { void this.start(); }
    });
  }

  private fail(message: string): void {
    this.log.error(message);
    void vscode.window.showErrorMessage(message, 'Open Settings').then((pick) => {
      if (pick) { void vscode.commands.executeCommand('workbench.action.openSettings', 'mltriage.interpreter'); }
    });
  }

  async dispose(): Promise<void> {
    if (this.restartTimer) { clearTimeout(this.restartTimer); }
    await this.pending.catch(() => undefined);
    await this.stopClient();
    this.changed.dispose();
  }
}
