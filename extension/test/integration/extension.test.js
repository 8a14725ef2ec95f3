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

// files.autoSave for the whole profile (the e2e starts with code-server's default, afterDelay)
async function setAutoSave(mode) {
  await vscode.workspace.getConfiguration('files').update('autoSave', mode, vscode.ConfigurationTarget.Global);
  await until(`files.autoSave ${mode}`, () => vscode.workspace.getConfiguration('files').get('autoSave') === mode, 5000);
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
    // issue 11.1: every line number is a line of the document (1-based), not of the selection
    for (const f of d.findings) { assert.ok(f.line >= first + 1 && f.line <= last + 1, `finding on line ${f.line}, selection ${first + 1}-${last + 1}`); }
    assert.strictEqual(d.view.root.line, first + 1);
    assert.ok(d.view.root.where.includes(`line ${first + 1}`), d.view.root.where);
    assert.ok(doc.lineAt(d.view.root.line - 1).text.includes('[rank2]: Traceback'));
  });

  test('quick fix opens the launch script with the exports inserted after its #SBATCH header, unsaved and shown', async () => {
    const { doc, diagnostics } = await openLog(FIX_LOG);
    let action;
    for (const d of diagnostics) {
      const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, d.range, vscode.CodeActionKind.QuickFix.value, 10);
      action = actions.find((a) => /add `export .*` to train\.slurm/.test(a.title));
      if (action) { break; }
    }
    assert.ok(action, 'an export quick fix for train.slurm');
    assert.ok(!action.edit, 'no edit for the editor to apply and auto-save');
    assert.strictEqual(action.command.command, 'mltriage.applyExports');
    const onDisk = require('fs').readFileSync(wsUri('train.slurm').fsPath, 'utf8');
    await setAutoSave('off');
    const told = await vscode.commands.executeCommand(action.command.command, ...action.command.arguments);
    assert.strictEqual(told.notice, 'mltriage: added to train.slurm (not saved yet: review, then save or undo).');
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor && editor.document.uri.fsPath.endsWith('train.slurm'), 'the script is shown');
    const script = editor.document;
    assert.ok(script.isDirty, 'left unsaved for the user to review');
    assert.strictEqual(require('fs').readFileSync(wsUri('train.slurm').fsPath, 'utf8'), onDisk, 'nothing written to disk');
    const text = script.getText().split('\n');
    const exportLine = text.findIndex((l) => l.startsWith('export '));
    const lastHeader = text.findIndex((l) => l.startsWith('# Fine-tune'));
    assert.strictEqual(exportLine, lastHeader + 2, text.join('\n'));
    assert.ok(text.findIndex((l) => l.startsWith('srun ')) > exportLine);
    // the inserted lines are selected and visible
    assert.strictEqual(editor.selection.start.line, lastHeader + 1);
    assert.strictEqual(editor.selection.end.line, exportLine);
    assert.ok(editor.visibleRanges.some((r) => r.contains(editor.selection)));
    // a normal edit: undo takes it back
    await vscode.commands.executeCommand('undo');
    assert.strictEqual(script.getText(), onDisk);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  test('a flag fix edits the vllm serve line of the launch script, beside the exports, unsaved and selected', async () => {
    const { doc, diagnostics } = await openLog('logs/vllm_p2p_batch_test.log');
    const root = diagnostics.find((d) => d.code && (d.code.value ?? d.code) === 'vllm-p2p-access-test-crashed');
    assert.ok(root, diagnostics.map((d) => d.code).join(', '));
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, root.range, vscode.CodeActionKind.QuickFix.value, 20);
    const titles = actions.map((a) => a.title);
    const flagAt = titles.findIndex((t) => t === 'mltriage: add `--disable-custom-all-reduce` to `vllm serve` in scripts/serve.sh');
    assert.ok(flagAt > 0 && titles.slice(0, flagAt).some((t) => t.includes('export NCCL_P2P_DISABLE')), titles.join('\n'));
    const action = actions[flagAt];
    assert.ok(!action.edit && action.command.command === 'mltriage.applyFlag');
    const onDisk = require('fs').readFileSync(wsUri('scripts/serve.sh').fsPath, 'utf8');
    await setAutoSave('off');
    await vscode.commands.executeCommand(action.command.command, ...action.command.arguments);
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor && editor.document.uri.fsPath.endsWith('serve.sh'), 'the script is shown');
    assert.ok(editor.document.isDirty, 'left unsaved for the user to review');
    assert.strictEqual(require('fs').readFileSync(wsUri('scripts/serve.sh').fsPath, 'utf8'), onDisk, 'nothing written to disk');
    const line = editor.document.lineAt(editor.selection.start.line).text;
    assert.strictEqual(line, '  --port 8000 --disable-custom-all-reduce 2>&1 | tee vllm.log');
    assert.strictEqual(editor.document.getText(editor.selection), ' --disable-custom-all-reduce', 'the flag is selected');
    assert.ok(editor.visibleRanges.some((r) => r.contains(editor.selection)));
    await vscode.commands.executeCommand('undo');
    assert.strictEqual(editor.document.getText(), onDisk);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  test('auto-save on (code-server\'s default): the notice says when the edit reaches the disk, and it does; undo takes it back', async () => {
    // issue 22.1: files.autoSave afterDelay writes the inserted lines within a second; the notice must say so
    const { doc, diagnostics } = await openLog(FIX_LOG);
    let action;
    for (const d of diagnostics) {
      const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', doc.uri, d.range, vscode.CodeActionKind.QuickFix.value, 10);
      action = actions.find((a) => /to train\.slurm/.test(a.title));
      if (action) { break; }
    }
    const fs = require('fs');
    const onDisk = fs.readFileSync(wsUri('train.slurm').fsPath, 'utf8');
    await setAutoSave('afterDelay');
    try {
      const told = await vscode.commands.executeCommand(action.command.command, ...action.command.arguments);
      assert.strictEqual(told.autoSave, 'afterDelay');
      assert.match(told.notice, /^mltriage: added to train\.slurm \(auto-save \(files\.autoSave: afterDelay\) writes it to disk \d+ ms after the edit; Undo takes it back, saved or not\)\.$/);
      const editor = vscode.window.activeTextEditor;
      assert.ok(editor.document.getText(editor.selection).includes('export TORCH_DISTRIBUTED_DEBUG=DETAIL'), 'the inserted lines are selected');
      // what the notice says is true: on disk within the delay (and a margin for a loaded machine)
      await until('auto-save to write the exports', () => fs.readFileSync(wsUri('train.slurm').fsPath, 'utf8').includes('export TORCH_DISTRIBUTED_DEBUG=DETAIL'), 15000);
      // the diff the notice offers compares the text before the edit with now
      const before = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: 'mltriage-before', path: editor.document.uri.path, query: editor.document.uri.toString() }));
      assert.strictEqual(before.getText(), onDisk);
      await vscode.window.showTextDocument(editor.document);
      await vscode.commands.executeCommand('undo');
      await until('auto-save to write the undo', () => fs.readFileSync(wsUri('train.slurm').fsPath, 'utf8') === onDisk, 15000);
    } finally {
      await setAutoSave('off');
    }
  });

  test('hover: what happened, the exports in a code block, how to verify, the entry one click away', async () => {
    const { doc, diagnostics } = await openLog(FIX_LOG);
    const root = diagnostics.find((d) => d.severity === vscode.DiagnosticSeverity.Error);
    const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, root.range.start);
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.ok(text.length < 2500, `hover is ${text.length} characters`);
    assert.match(text, /```sh\nexport TORCH_DISTRIBUTED_DEBUG=DETAIL\n```/);
    assert.ok(text.indexOf('```sh\nexport') < text.indexOf('**Verify:**'));
    assert.ok(text.indexOf('**Verify:**') < text.indexOf('\n---\n'), 'the verify command on the first screen, above the rest');
    assert.ok(!root.message.includes('`'), root.message);
    assert.match(text, /\[Open the full entry\]\(command:mltriage\.showEntry\?/);
  });

  test('vLLM P2P self-test: the lists read as GPU pairs, and the child\'s own error is flagged', async () => {
    const { doc, diagnostics } = await openLog('logs/vllm_p2p_batch_test.log');
    const batch = diagnostics.find((d) => d.code.value === 'vllm-p2p-access-test-crashed');
    assert.ok(batch, diagnostics.map((d) => d.code.value).join(' '));
    // the pairs are a note: in the hover, under the fix (the message is one line of what broke)
    const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, batch.range.start);
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.ok(text.includes('0→0, 0→1, 1→0, 1→1'), text);
    assert.strictEqual(batch.severity, vscode.DiagnosticSeverity.Error);
    const child = doc.getText().split('\n').findIndex((l) => l.includes('CUDART error: initialization error'));
    const cuda = diagnostics.find((d) => d.range.start.line === child && d.code.value === 'cuda-initialization-error');
    assert.ok(cuda, diagnostics.map((d) => `${d.code.value}@${d.range.start.line}`).join(' '));
    // issue 22.4: the view files it under Context, so it is no second error in the Problems panel
    assert.strictEqual(cuda.severity, vscode.DiagnosticSeverity.Warning);
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
    // issue 22.7: the view's "From" line names the command, it does not repeat it whole
    assert.strictEqual(failure.origin, 'terminal "mltriage-e2e", the command "sleep 1; cat logs/torchrun_python_except…" (exit 1)');
    // "Diagnose Terminal Output" reads the same command's output from shell integration
    const again = await vscode.commands.executeCommand('mltriage.diagnoseTerminalOutput');
    assert.strictEqual(again.status, 'failure');
    assert.deepStrictEqual(again.findings.map((f) => f.signature), failure.diagnosis.findings.map((f) => f.signature));
    console.log(`mltriage-timing terminal-toast-ms ${failure.msFromEndToNotice} (crash log, ${CRASH_LOG})`);
    // issue 11.2: a CUDA OOM printed by a command that exits 1, and an error no signature knows
    const cases = [
      ["sleep 1; python3 -c \"raise RuntimeError('CUDA out of memory. Tried to allocate 20.00 GiB')\"", /CUDA out of memory|out of memory/i],
      ["sleep 1; python3 -m pip install --no-index --find-links /nonexistent mltriage-no-such-package", /mltriage-no-such-package/],
    ];
    for (const [command, named] of cases) {
      const next = new Promise((resolve) => { const sub = api.onDidDetectTerminalFailure((f) => { sub.dispose(); resolve(f); }); });
      si.executeCommand(command);
      const f = await Promise.race([next, sleep(60000).then(() => undefined)]);
      assert.ok(f, `notified for: ${command}`);
      assert.notStrictEqual(f.exitCode, 0);
      assert.match(f.notice, named, f.notice);
      console.log(`mltriage-timing terminal-toast-ms ${f.msFromEndToNotice} (${command.slice(9, 60)})`);
    }
    term.dispose();
  });

  test('activation timings are recorded (bench/RESULTS.md: first squiggle)', async () => {
    assert.ok(api.timings.serverReady > 0 && api.timings.firstDiagnostics > 0, JSON.stringify(api.timings));
    console.log(`mltriage-timing activation ${JSON.stringify(api.timings)}`);
  });

  test('a server that dies is restarted, and the user is told so', async () => {
    // the server is this extension host's child that runs start.py (its engine worker is the server's)
    const serverPid = () => {
      const fs = require('fs');
      for (const entry of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) { continue; }
        try {
          const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
          if (Number(fields[1]) === process.pid && fields[0] !== 'Z' && cmdline.includes('start.py')) { return Number(entry); }
        } catch { /* gone meanwhile */ }
      }
      return undefined;
    };
    const { doc } = await openLog(CRASH_LOG);
    const before = serverPid();
    assert.ok(before, 'the server process');
    const told = api.notices().length;
    process.kill(before, 'SIGKILL');
    const after = await until('a new server process', () => { const pid = serverPid(); return pid && pid !== before ? pid : undefined; });
    assert.ok(after !== before);
    await until('the user told of the restart', () => api.notices().length > told);
    assert.match(api.notices()[told], /stopped unexpectedly and was restarted/);
    // and it serves again: the open log is diagnosed anew, its hover answered
    const diagnostics = await until('diagnostics from the new server', () => {
      const d = vscode.languages.getDiagnostics(doc.uri).filter((x) => x.source === 'mltriage');
      return d.length ? d : undefined;
    });
    const hovers = await until('a hover from the new server', async () => {
      const h = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, diagnostics[0].range.start);
      return h && h.length ? h : undefined;
    });
    assert.ok(hovers.length > 0);
  });

  test('the P2P probe answers in words on a machine without GPUs', async () => {
    const report = await vscode.commands.executeCommand('mltriage.runP2PProbe');
    assert.ok(report && typeof report === 'object');
    assert.strictEqual(report.machine_verdict, 'NO_GPU', JSON.stringify(report).slice(0, 500));
    assert.ok(!/Traceback/.test(JSON.stringify(report)), JSON.stringify(report));
  });
});
