// The extension inside a real VS Code (code-server), through the public `vscode` API only.
const assert = require('assert');
const path = require('path');
const vscode = require('vscode');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const CRASH_LOG = 'logs/torchrun_python_exception.log';
// a log whose root cause has an env fix (see tests/lsp/data/README.md)
const FIX_LOG = process.env.MLTRIAGE_FIX_LOG || 'logs/torchrun_collective_mismatch.log';

function wsUri(rel) { return vscode.Uri.joinPath(vscode.workspace.workspaceFolders[0].uri, rel); }

async function until(what, fn, ms = 60000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) { return v; }
    if (Date.now() > end) { throw new Error(`timed out waiting for ${what}`); }
    await sleep(100);
  }
}

async function openLog(rel) {
  const doc = await vscode.workspace.openTextDocument(wsUri(rel));
  const editor = await vscode.window.showTextDocument(doc);
  const diagnostics = await until(`mltriage diagnostics on ${rel}`, () => {
    const d = vscode.languages.getDiagnostics(doc.uri).filter((x) => x.source === 'mltriage');
    return d.length ? d : undefined;
  });
  return { doc, editor, diagnostics };
}

suite('mltriage extension', () => {
  let api;
  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension('mltriage.mltriage');
    assert.ok(ext, 'extension is installed');
    api = await ext.activate();
  });

  test('a crashed torchrun log gets diagnostics with codes linking to entries', async () => {
    const { doc, diagnostics } = await openLog(CRASH_LOG);
    assert.strictEqual(doc.languageId, 'log');
    const errors = diagnostics.filter((d) => d.severity === vscode.DiagnosticSeverity.Error);
    assert.ok(errors.length > 0, 'root cause is an error');
    for (const d of diagnostics) {
      assert.strictEqual(d.code.target.scheme, 'mltriage-entry');
      assert.ok(d.code.target.path.endsWith(`${d.code.value}.md`));
    }
    // the initiating rank of this recorded run is rank 2 (its scenario.json)
    assert.ok(errors.some((d) => doc.lineAt(d.range.start.line).text.includes('[rank2]')), 'rank 2 traceback flagged');
  });

  test('hover shows the encyclopedia entry for a matched line', async () => {
    const { doc, diagnostics } = await openLog(CRASH_LOG);
    const d = diagnostics[0];
    const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, d.range.start);
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.match(text, new RegExp(String(d.code.value)));
    assert.match(text, /fix|Fix/);
  });

  test('the entry document behind codeDescription is served', async () => {
    const { diagnostics } = await openLog(CRASH_LOG);
    const doc = await vscode.workspace.openTextDocument(diagnostics[0].code.target);
    assert.ok(doc.getText().length > 100, doc.getText());
    assert.ok(!/could not be shown/.test(doc.getText()), doc.getText());
  });

  test('Diagnose Selection on a traceback returns the diagnosis', async () => {
    const { doc, editor } = await openLog(CRASH_LOG);
    const lines = doc.getText().split('\n');
    const first = lines.findIndex((l) => l.includes('[rank2]: Traceback'));
    const last = lines.findIndex((l, i) => i > first && l.includes('[rank2]: IndexError'));
    assert.ok(first >= 0 && last > first);
    editor.selection = new vscode.Selection(first, 0, last + 1, 0);
    const d = await vscode.commands.executeCommand('mltriage.diagnoseSelection');
    assert.strictEqual(d.status, 'failure');
    assert.ok(d.findings.length > 0);
    assert.strictEqual(api.lastDiagnosis().status, 'failure');
  });

  test('quick fix adds the exports to the launch script after its #SBATCH header', async () => {
    const { doc, diagnostics } = await openLog(FIX_LOG);
    let action;
    for (const d of diagnostics) {
      const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, d.range, vscode.CodeActionKind.QuickFix.value, 10);
      action = actions.find((a) => /add `export .*` to train\.slurm/.test(a.title));
      if (action) { break; }
    }
    assert.ok(action, 'an export quick fix for train.slurm');
    assert.ok(action.edit, 'the edit is resolved');
    assert.ok(await vscode.workspace.applyEdit(action.edit));
    const script = await vscode.workspace.openTextDocument(wsUri('train.slurm'));
    const text = script.getText().split('\n');
    const exportLine = text.findIndex((l) => l.startsWith('export '));
    const lastHeader = text.findIndex((l) => l.startsWith('# Fine-tune'));
    assert.strictEqual(exportLine, lastHeader + 2, text.join('\n'));
    assert.ok(text.findIndex((l) => l.startsWith('srun ')) > exportLine);
    await script.save();
  });

  test('a failing command in the integrated terminal is detected and diagnosed', async () => {
    const term = vscode.window.createTerminal({ name: 'mltriage-e2e', shellPath: '/bin/bash', cwd: vscode.workspace.workspaceFolders[0].uri });
    term.show();
    const si = term.shellIntegration || await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no shell integration within 30 s')), 30000);
      const sub = vscode.window.onDidChangeTerminalShellIntegration((e) => {
        if (e.terminal === term) { clearTimeout(t); sub.dispose(); resolve(e.shellIntegration); }
      });
    });
    const detected = new Promise((resolve) => { const sub = api.onDidDetectTerminalFailure((f) => { sub.dispose(); resolve(f); }); });
    // execution.read() yields what is written after the extension starts reading; a command that prints
    // within milliseconds of starting can beat it (a training run never does), hence the short sleep
    si.executeCommand(`sleep 1; cat ${CRASH_LOG}; exit_code=1; (exit $exit_code)`);
    const failure = await Promise.race([detected, sleep(60000).then(() => undefined)]);
    assert.ok(failure, 'failure detected');
    assert.strictEqual(failure.exitCode, 1);
    assert.strictEqual(failure.diagnosis.status, 'failure');
    // "Diagnose Terminal Output" reads the same command's output from shell integration
    const again = await vscode.commands.executeCommand('mltriage.diagnoseTerminalOutput');
    assert.strictEqual(again.status, 'failure');
    assert.deepStrictEqual(again.findings.map((f) => f.signature), failure.diagnosis.findings.map((f) => f.signature));
    term.dispose();
  });

  test('the P2P probe answers in words on a machine without GPUs', async () => {
    const report = await vscode.commands.executeCommand('mltriage.runP2PProbe');
    assert.ok(report && typeof report === 'object');
    assert.strictEqual(report.machine_verdict, 'NO_GPU', JSON.stringify(report).slice(0, 500));
    assert.ok(!/Traceback/.test(JSON.stringify(report)), JSON.stringify(report));
  });
});
