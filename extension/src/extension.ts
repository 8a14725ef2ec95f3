// mltriage for VS Code: a thin shell around the Python language server.
import * as vscode from 'vscode';
import { ServerManager } from './server';
import { onPythonInterpreterChange } from './python';
import { TerminalFailure, TerminalWatcher } from './terminal';
import { DiagnosisView } from './view';
import { DiagnosisJson, FindingJson, headline } from './diagnosis';
import { stripTerminalEscapes } from './ansi';
import { EntryProvider, ENTRY_SCHEME, entryUri } from './entries';

// What other extensions (and our tests) can use: `vscode.extensions.getExtension(...).exports`.
export interface MltriageApi {
  diagnoseText(text: string): Promise<DiagnosisJson>;
  onDidDetectTerminalFailure: vscode.Event<TerminalFailure>;
  lastDiagnosis(): DiagnosisJson | undefined;
}

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<MltriageApi> {
  const log = vscode.window.createOutputChannel('mltriage', { log: true });
  manager = new ServerManager(context, log);
  const server = manager;
  const diagnoseText = (text: string, extra: Record<string, unknown> = {}) =>
    server.executeCommand<DiagnosisJson>('mltriage.diagnoseText', { text, ...extra });

  const showEntry = async (signature?: string, facts: Record<string, string> = {}) => {
    const id = signature ?? await pickSignature();
    if (!id) { return; }
    const doc = await vscode.workspace.openTextDocument(entryUri(id, facts));
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  };
  const applyFix = async (finding: Pick<FindingJson, 'signature' | 'title' | 'fix'>) =>
    pickLaunchScriptAndInsert(server, finding.fix.env, finding.signature, finding.title);
  const view = new DiagnosisView({ applyFix, showEntry });
  const terminals = new TerminalWatcher({
    diagnose: (text) => diagnoseText(text, { source: '<terminal>' }),
    showDiagnosis: (d, origin) => view.show(d, origin),
    applyFix,
    log,
  });

  const diagnoseAndShow = async (text: string, origin: string, extra: Record<string, unknown> = {}) => {
    if (!text.trim()) { void vscode.window.showWarningMessage('mltriage: there is no text to diagnose.'); return; }
    const d = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'mltriage: diagnosing' },
      () => diagnoseText(text, extra));
    view.show(d, origin);
    if (d.status !== 'failure') { void vscode.window.showInformationMessage(`mltriage: ${headline(d)} in ${origin}.`); }
    return d;
  };

  const terminalSelection = async (): Promise<string> => {
    // Terminal.selection is a proposed API; copySelection + clipboard is the stable way.
    const saved = await vscode.env.clipboard.readText();
    await vscode.env.clipboard.writeText('');
    await vscode.commands.executeCommand('workbench.action.terminal.copySelection');
    const text = await vscode.env.clipboard.readText();
    await vscode.env.clipboard.writeText(saved);
    return stripTerminalEscapes(text);
  };

  context.subscriptions.push(
    log, view, terminals,
    { dispose: () => void manager?.dispose() },
    vscode.workspace.registerTextDocumentContentProvider(ENTRY_SCHEME, new EntryProvider(server)),
    vscode.commands.registerCommand('mltriage.diagnoseSelection', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) {
        if (vscode.window.activeTerminal) { return diagnoseAndShow(await terminalSelection(), 'the terminal selection'); }
        void vscode.window.showWarningMessage('mltriage: open a log or select text first.');
        return;
      }
      const { document, selection } = editor;
      const name = vscode.workspace.asRelativePath(document.uri);
      if (selection.isEmpty) {
        const d = await server.executeCommand<DiagnosisJson>('mltriage.diagnoseText', { uri: document.uri.toString() });
        view.show(d, name);
        return d;
      }
      return diagnoseAndShow(document.getText(selection), `the selection in ${name}`,
        { uri: document.uri.toString(), startLine: selection.start.line });
    }),
    vscode.commands.registerCommand('mltriage.diagnoseTerminalSelection', async () =>
      diagnoseAndShow(await terminalSelection(), 'the terminal selection')),
    vscode.commands.registerCommand('mltriage.diagnoseTerminalOutput', async () => {
      const terminal = vscode.window.activeTerminal;
      let text = terminals.outputOf(terminal);
      if (text === undefined && terminal) {
        // no shell integration: take the whole visible buffer instead
        await vscode.commands.executeCommand('workbench.action.terminal.selectAll');
        text = await terminalSelection();
        await vscode.commands.executeCommand('workbench.action.terminal.clearSelection');
      }
      if (!text) { void vscode.window.showWarningMessage('mltriage: no terminal output to diagnose yet.'); return; }
      return diagnoseAndShow(text, `the last command in terminal "${terminal?.name}"`, { source: '<terminal>' });
    }),
    vscode.commands.registerCommand('mltriage.runP2PProbe', async () => {
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('mltriage: the P2P probe runs GPU code and is disabled in untrusted workspaces.');
        return;
      }
      const report = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'mltriage: probing GPU peer-to-peer…' },
        () => server.executeCommand<Record<string, unknown>>('mltriage.runProbe'));
      const doc = await vscode.workspace.openTextDocument({ language: 'json', content: JSON.stringify(report, null, 2) });
      await vscode.window.showTextDocument(doc, { preview: true });
      if (report && (report.status === 'unavailable' || report.status === 'error')) {
        void vscode.window.showWarningMessage(`mltriage: ${String(report.error)}`);
      } else if (report && report.machine_verdict) {
        void vscode.window.showInformationMessage(`mltriage P2P probe: ${String(report.machine_verdict)}: ${String(report.message ?? '')}`);
      }
      return report;
    }),
    vscode.commands.registerCommand('mltriage.showEntry', showEntry),
    vscode.commands.registerCommand('mltriage.showDiagnosis', () => {
      if (view.last) { view.show(view.last, 'the last diagnosis'); }
    }),
    vscode.commands.registerCommand('mltriage.copyExports', async (text: string) => {
      await vscode.env.clipboard.writeText(text);
      void vscode.window.showInformationMessage('mltriage: exports copied to the clipboard.');
    }),
    vscode.commands.registerCommand('mltriage.pickLaunchScript', (env: Record<string, string>, signature: string, title: string) =>
      pickLaunchScriptAndInsert(server, env, signature, title)),
    vscode.commands.registerCommand('mltriage.restartServer', () => server.start()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('mltriage.interpreter') || e.affectsConfiguration('mltriage.diagnostics')) {
        server.scheduleRestart('settings changed');
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => server.scheduleRestart('workspace trusted')),
  );
  const pythonWatch = await onPythonInterpreterChange(() => server.scheduleRestart('Python interpreter changed'));
  if (pythonWatch) { context.subscriptions.push(pythonWatch); }

  await server.start();
  return {
    diagnoseText: (text) => diagnoseText(text),
    onDidDetectTerminalFailure: terminals.onDidDetectFailure,
    lastDiagnosis: () => view.last,
  };
}

async function pickSignature(): Promise<string | undefined> {
  const ids = new Set<string>();
  for (const [, diagnostics] of vscode.languages.getDiagnostics()) {
    for (const d of diagnostics) {
      if (d.source === 'mltriage' && d.code) { ids.add(typeof d.code === 'object' ? String(d.code.value) : String(d.code)); }
    }
  }
  if (!ids.size) {
    return (await vscode.window.showInputBox({ prompt: 'Signature id, e.g. cuda-oom' }))?.trim() || undefined;
  }
  return vscode.window.showQuickPick([...ids].sort(), { placeHolder: 'Signature to open' });
}

interface ScriptInfo { uri: string; path: string; distributed: boolean }

async function pickLaunchScriptAndInsert(server: ServerManager, env: Record<string, string>, signature: string, title: string): Promise<void> {
  if (!env || !Object.keys(env).length) {
    void vscode.window.showInformationMessage('mltriage: this fix has no environment exports to add.');
    return;
  }
  const scripts = await server.executeCommand<ScriptInfo[]>('mltriage.launchScripts');
  const browse = { label: '$(folder-opened) Choose another file…', script: undefined as string | undefined };
  const items = [
    ...scripts.map((s) => ({ label: vscode.workspace.asRelativePath(vscode.Uri.parse(s.uri)), description: s.distributed ? 'distributed launcher' : '', script: s.uri as string | undefined })),
    browse,
  ];
  const pick = await vscode.window.showQuickPick(items, { placeHolder: `Add ${Object.keys(env).join(', ')} to which launch script?` });
  if (!pick) { return; }
  let target = pick.script;
  if (!target) {
    const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: 'Add exports', filters: { 'Shell scripts': ['sh', 'bash', 'slurm', 'sbatch'], 'All files': ['*'] } });
    if (!chosen?.length) { return; }
    target = chosen[0].toString();
  }
  const result = await server.executeCommand<{ applied: boolean; reason?: string }>('mltriage.insertExports', { script: target, env, signature, title });
  if (!result.applied) {
    void vscode.window.showInformationMessage(`mltriage: nothing changed: ${result.reason ?? 'the edit was refused'}`);
  }
}

export async function deactivate(): Promise<void> {
  await manager?.dispose();
  manager = undefined;
}
