// mltriage for VS Code: a thin shell around the Python language server, which decides and words
// everything shown (diagnostics, hovers, quick fixes, the view's content).
import * as vscode from 'vscode';
import { ServerManager } from './server';
import { onPythonInterpreterChange } from './python';
import { TerminalFailure, TerminalWatcher } from './terminal';
import { DiagnosisView } from './view';
import { DiagnosisJson, ProbeAnswer, ViewRoot } from './diagnosis';
import { EntryProvider, ENTRY_SCHEME, entryRequest, entryTarget } from './entries';

// What other extensions (and our tests) can use: `vscode.extensions.getExtension(...).exports`.
export interface MltriageApi {
  diagnoseText(text: string): Promise<DiagnosisJson>;
  onDidDetectTerminalFailure: vscode.Event<TerminalFailure>;
  lastDiagnosis(): DiagnosisJson | undefined;
  timings: Record<string, number>; // ms since activation started: interpreter, server, first diagnostics
  notices(): readonly string[]; // what the user was told about the server (a restart after it died)
}

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<MltriageApi> {
  const activatedAt = Date.now();
  const timings: Record<string, number> = {};
  const log = vscode.window.createOutputChannel('mltriage', { log: true });
  manager = new ServerManager(context, log);
  const server = manager;
  const diagnoseText = (text: string, extra: Record<string, unknown> = {}) =>
    server.executeCommand<DiagnosisJson>('mltriage.diagnoseText', { text, ...extra });

  // "Open the full entry" (hover, view, quick fix): the entry rendered, not its Markdown source
  const showEntry = async (uriOrSignature?: string) => {
    const id = uriOrSignature ?? await pickSignature();
    if (!id) { return; }
    const { signature, facts } = entryRequest(entryTarget(id));
    const entry = await server.executeCommand<{ signature: string; html: string }>('mltriage.entryView', signature, facts);
    view.showEntry(entry.signature, entry.html);
    return entry;
  };
  const applyFix = async (root: Pick<ViewRoot, 'signature' | 'title' | 'env'>) =>
    pickLaunchScriptAndInsert(server, root.env, root.signature, root.title);
  const view: DiagnosisView = new DiagnosisView({ applyFix, showEntry: async (uri) => { await showEntry(uri); } });
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
    if (!d.view.root) { void vscode.window.showInformationMessage(`mltriage: ${d.view.headline} in ${origin}.`); }
    return d;
  };

  const terminalSelection = async (): Promise<string> => {
    // Terminal.selection is a proposed API; copySelection + clipboard is the stable way.
    const saved = await vscode.env.clipboard.readText();
    await vscode.env.clipboard.writeText('');
    await vscode.commands.executeCommand('workbench.action.terminal.copySelection');
    const text = await vscode.env.clipboard.readText();
    await vscode.env.clipboard.writeText(saved);
    return text;
  };

  const showProbe = (report: ProbeAnswer, origin: string) => {
    view.showProbe(report, origin);
    if (report.status === 'unavailable' || report.status === 'error') {
      void vscode.window.showWarningMessage(`mltriage: ${String(report.error)}`);
    } else if (report.machine_verdict) {
      void vscode.window.showInformationMessage(`mltriage P2P probe: ${report.machine_verdict}: ${report.message ?? ''}`);
    }
  };

  // when the first squiggles arrive (the figure bench/RESULTS.md reports for a fresh window)
  const firstDiagnostics = vscode.languages.onDidChangeDiagnostics((e) => {
    if (e.uris.some((u) => vscode.languages.getDiagnostics(u).some((d) => d.source === 'mltriage'))) {
      timings.firstDiagnostics = Date.now() - activatedAt;
      log.info(`first diagnostics ${timings.firstDiagnostics} ms after activation`);
      firstDiagnostics.dispose();
    }
  });

  context.subscriptions.push(
    log, view, terminals, firstDiagnostics,
    { dispose: () => void manager?.dispose() },
    vscode.workspace.registerTextDocumentContentProvider(ENTRY_SCHEME, new EntryProvider(server)),
    vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, beforeEditProvider),
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
      // whole lines (a log is read by lines, and columns stay the document's); a selection that
      // ends at the start of a line does not include that line
      const last = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line - 1 : selection.end.line;
      const lines = new vscode.Range(selection.start.line, 0, last, document.lineAt(last).text.length);
      return diagnoseAndShow(document.getText(lines), `the selection in ${name} (lines ${selection.start.line + 1}–${last + 1})`,
        { uri: document.uri.toString(), startLine: selection.start.line });
    }),
    vscode.commands.registerCommand('mltriage.diagnoseTerminalSelection', async () =>
      diagnoseAndShow(await terminalSelection(), 'the terminal selection', { source: '<terminal>' })),
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
        () => server.executeCommand<ProbeAnswer>('mltriage.runProbe'));
      showProbe(report, 'this machine');
      return report;
    }),
    vscode.commands.registerCommand('mltriage.showProbeReport', async (uri?: vscode.Uri) => {
      // a report saved on a GPU node (`mltriage probe --json > report.json`): the active JSON editor or a file
      let document = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
      if (!document || document.languageId !== 'json') {
        const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Probe report': ['json'] } });
        if (!chosen?.length) { return; }
        document = await vscode.workspace.openTextDocument(chosen[0]);
      }
      const report = await server.executeCommand<ProbeAnswer>('mltriage.probeView', { text: document.getText() });
      showProbe(report, vscode.workspace.asRelativePath(document.uri));
      return report;
    }),
    vscode.commands.registerCommand('mltriage.showEntry', showEntry),
    vscode.commands.registerCommand('mltriage.showDiagnosis', () => {
      if (view.last) { view.show(view.last, 'the last diagnosis'); }
    }),
    vscode.commands.registerCommand('mltriage.copyExports', async (text: string, what = 'exports') => {
      await vscode.env.clipboard.writeText(text);
      void vscode.window.showInformationMessage(`mltriage: ${what} copied to the clipboard.`);
    }),
    vscode.commands.registerCommand('mltriage.pickLaunchScript', (env: Record<string, string>, signature: string, title: string) =>
      pickLaunchScriptAndInsert(server, env, signature, title)),
    vscode.commands.registerCommand('mltriage.applyExports', (fix: ScriptFix) => applyExports(server, fix)),
    vscode.commands.registerCommand('mltriage.applyFlag', (fix: FlagFix) => applyFlag(server, fix)),
    vscode.commands.registerCommand('mltriage.pickScriptForFlag', async (flag: FlagFix['flag']) => {
      const script = await chooseScript(`Add ${flag.argument ?? flag.flag}`);
      return script ? applyFlag(server, { script, flag }) : undefined;
    }),
    vscode.commands.registerCommand('mltriage.restartServer', () => server.start()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('mltriage.interpreter') || e.affectsConfiguration('mltriage.diagnostics')) {
        server.scheduleRestart('settings changed');
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => server.scheduleRestart('workspace trusted')),
  );
  // the Python extension's API is only a restart trigger: do not wait for it before the server starts
  void onPythonInterpreterChange(() => server.scheduleRestart('Python interpreter changed'))
    .then((watch) => { if (watch) { context.subscriptions.push(watch); } });

  await server.start();
  timings.serverReady = Date.now() - activatedAt;
  log.info(`activated: server ready ${timings.serverReady} ms after activation started`);
  return {
    diagnoseText: (text) => diagnoseText(text),
    onDidDetectTerminalFailure: terminals.onDidDetectFailure,
    lastDiagnosis: () => view.last,
    timings,
    notices: () => server.notices,
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
interface ScriptFix { script: string; env: Record<string, string>; signature: string; title: string }
interface ScriptEdit { uri?: string; version?: number | null; line?: number; character?: number; text?: string; reason?: string }

// What the user was told of a script edit (returned by the apply commands, for the tests).
export interface EditNotice { notice: string; autoSave: string }

// The text of a script as it was before our last edit of it, for "Show Diff" (scheme mltriage-before).
const BEFORE_SCHEME = 'mltriage-before';
const beforeEdit = new Map<string, string>();
export const beforeEditProvider: vscode.TextDocumentContentProvider = {
  provideTextDocumentContent: (uri) => beforeEdit.get(uri.query) ?? '',
};

// When an edit left in the editor reaches the disk: files.autoSave decides, not us (code-server and
// VS Code for the web default it to afterDelay), so the notice says what is true under the setting.
export function whenSaved(document: vscode.TextDocument): { autoSave: string; words: string } {
  const files = vscode.workspace.getConfiguration('files', document.uri);
  const autoSave = files.get<string>('autoSave', 'off');
  const undo = 'Undo takes it back, saved or not';
  switch (autoSave) {
    case 'afterDelay':
      return { autoSave, words: `auto-save (files.autoSave: afterDelay) writes it to disk ${files.get<number>('autoSaveDelay', 1000)} ms after the edit; ${undo}` };
    case 'onFocusChange':
      return { autoSave, words: `auto-save (files.autoSave: onFocusChange) writes it to disk when the editor loses focus; ${undo}` };
    case 'onWindowChange':
      return { autoSave, words: `auto-save (files.autoSave: onWindowChange) writes it to disk when the window loses focus; ${undo}` };
    default:
      return { autoSave, words: 'not saved yet: review, then save or undo' };
  }
}

// The edit is selected in its editor; the notice says when it reaches the disk and offers the diff
// against the text before it, and Undo.
function announceEdit(editor: vscode.TextEditor, before: string, what: string): EditNotice {
  const document = editor.document;
  beforeEdit.set(document.uri.toString(), before);
  const { autoSave, words } = whenSaved(document);
  const notice = `mltriage: ${what} (${words}).`;
  void vscode.window.showInformationMessage(notice, 'Show Diff', 'Undo').then(async (pick) => {
    if (pick === 'Show Diff') {
      const left = vscode.Uri.from({ scheme: BEFORE_SCHEME, path: document.uri.path, query: document.uri.toString() });
      await vscode.commands.executeCommand('vscode.diff', left, document.uri, `${vscode.workspace.asRelativePath(document.uri)}: before mltriage ↔ now`);
    } else if (pick === 'Undo') {
      await vscode.window.showTextDocument(document, { preview: false });
      await vscode.commands.executeCommand('undo');
    }
  });
  return { notice, autoSave };
}

// Opens the script, inserts the fix's lines as a normal edit (undoable, reviewable: selected, a diff
// on request) and shows them selected. The server says where and what (it knows the #SBATCH header rules).
async function applyExports(server: ServerManager, fix: ScriptFix): Promise<EditNotice | undefined> {
  const uri = vscode.Uri.parse(fix.script);
  const document = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(document, { preview: false });
  const edit = await server.executeCommand<ScriptEdit>('mltriage.scriptEdit', fix);
  if (edit.text === undefined || edit.line === undefined) {
    void vscode.window.showInformationMessage(`mltriage: nothing changed: ${edit.reason ?? 'the edit was refused'}`);
    return undefined;
  }
  if (edit.version !== null && edit.version !== undefined && edit.version !== document.version) {
    void vscode.window.showWarningMessage('mltriage: the script changed meanwhile; run the quick fix again.');
    return undefined;
  }
  const at = new vscode.Position(edit.line, edit.character ?? 0);
  const text = edit.text;
  const before = document.getText();
  if (!await editor.edit((b) => b.insert(at, text))) { return undefined; }
  // the inserted lines: after `at` when the text starts with a line break (a script without a final one)
  const breaks = text.split('\n').length - 1;
  const firstNew = at.character ? at.line + 1 : at.line;
  const lastNew = at.line + breaks - 1;
  editor.selection = new vscode.Selection(firstNew, 0, lastNew, editor.document.lineAt(lastNew).text.length);
  editor.revealRange(editor.selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return announceEdit(editor, before, `added to ${vscode.workspace.asRelativePath(uri)}`);
}

interface FlagFix { script: string; flag: { command: string; flag: string; value: string | null; argument?: string } }
interface FlagEdit {
  uri?: string; version?: number | null; reason?: string;
  edits?: { line: number; character: number; end_line: number; end_character: number; text: string }[];
}

// Adds a fix's flag to the script's launch command lines (`vllm serve`, `torchrun`): the server
// finds the lines and words; here the script opens, the edit is made unsaved and the flags are shown selected.
async function applyFlag(server: ServerManager, fix: FlagFix): Promise<EditNotice | undefined> {
  const uri = vscode.Uri.parse(fix.script);
  const document = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(document, { preview: false });
  const answer = await server.executeCommand<FlagEdit>('mltriage.flagEdit', fix);
  if (!answer.edits?.length) {
    void vscode.window.showInformationMessage(`mltriage: nothing changed: ${answer.reason ?? 'the edit was refused'}`);
    return undefined;
  }
  if (answer.version !== null && answer.version !== undefined && answer.version !== document.version) {
    void vscode.window.showWarningMessage('mltriage: the script changed meanwhile; run the quick fix again.');
    return undefined;
  }
  const edits = answer.edits;
  const before = document.getText();
  const ok = await editor.edit((b) => {
    for (const e of edits) { b.replace(new vscode.Range(e.line, e.character, e.end_line, e.end_character), e.text); }
  });
  if (!ok) { return undefined; }
  // where each new text now is: edits are single-line and in document order, so only earlier edits
  // on the same line move a later one
  const selections: vscode.Selection[] = [];
  let shiftLine = -1;
  let shift = 0;
  for (const e of edits) {
    if (e.line !== shiftLine) { shiftLine = e.line; shift = 0; }
    const start = e.character + shift;
    selections.push(new vscode.Selection(e.line, start, e.line, start + e.text.length));
    shift += e.text.length - (e.end_character - e.character);
  }
  editor.selections = selections;
  editor.revealRange(selections[0], vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return announceEdit(editor, before, `${fix.flag.argument ?? fix.flag.flag} added to ${vscode.workspace.asRelativePath(uri)}`);
}

async function pickLaunchScriptAndInsert(server: ServerManager, env: Record<string, string>, signature: string, title: string): Promise<void> {
  if (!env || !Object.keys(env).length) {
    void vscode.window.showInformationMessage('mltriage: this fix has no environment exports to add.');
    return;
  }
  const scripts = await server.executeCommand<ScriptInfo[]>('mltriage.launchScripts');
  const trusted = vscode.workspace.isTrusted;
  const browse = { label: trusted ? '$(folder-opened) Choose another file…' : '$(folder-opened) Open a launch script…', script: undefined as string | undefined, trust: false };
  // Restricted Mode: the server reads only scripts open in the editor; trusting the folder lists the rest
  const trust = { label: '$(shield) Trust this folder to list its launch scripts', description: 'Restricted Mode', script: undefined, trust: true };
  const items = [
    ...scripts.map((s) => ({ label: vscode.workspace.asRelativePath(vscode.Uri.parse(s.uri)), description: s.distributed ? 'distributed launcher' : '', script: s.uri as string | undefined, trust: false })),
    browse,
    ...(trusted ? [] : [trust]),
  ];
  const names = Object.keys(env).join(', ');
  const pick = await vscode.window.showQuickPick(items, {
    placeHolder: trusted ? `Add ${names} to which launch script?`
      : `Add ${names} to which launch script? Restricted Mode lists only open scripts: open one, or trust the folder to list them all`,
  });
  if (!pick) { return; }
  if (pick.trust) { await vscode.commands.executeCommand('workbench.trust.manage'); return; }
  const target = pick.script ?? await chooseScript('Add exports');
  if (target) { await applyExports(server, { script: target, env, signature, title }); }
}

// A script the user picks on disk (in Restricted Mode the one way to edit a script not open yet:
// it is opened first, and the server reads the editor's copy).
async function chooseScript(openLabel: string): Promise<string | undefined> {
  const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel, filters: { 'Shell scripts': ['sh', 'bash', 'slurm', 'sbatch'], 'All files': ['*'] } });
  return chosen?.length ? chosen[0].toString() : undefined;
}

export async function deactivate(): Promise<void> {
  await manager?.dispose();
  manager = undefined;
}
