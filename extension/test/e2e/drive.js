// UI end-to-end with the packaged .vsix installed in code-server, driven like a person would:
// open a log, see squiggles and a hover, diagnose a selection, apply the quick fix and check the
// edited file on disk, run a failing command in the integrated terminal and see the notification.
// env: PORT, WS (workspace folder), SHOTS (screenshot folder), MLTRIAGE_FIX_LOG (relative path)
const fs = require('fs');
const path = require('path');
const { launch } = require('./browser');

const PORT = process.env.PORT;
const WS = process.env.WS;
const SHOTS = process.env.SHOTS || path.join(WS, '..', 'shots');
const CRASH_LOG = 'torchrun_python_exception.log';
const FIX_LOG = process.env.MLTRIAGE_FIX_LOG || 'logs/torchrun_collective_mismatch.log';
fs.mkdirSync(SHOTS, { recursive: true });
const t0 = Date.now();
const log = (...a) => console.log(`[drive ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
let passed = 0;
const step = async (name, fn) => { await fn(); passed += 1; log('✓', name); };

async function command(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>' + title);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

async function openFile(page, name) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: path.basename(name) }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: path.basename(name) }).waitFor();
}

async function goToLine(page, line) { // 1-based
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`:${line}`);
  await page.locator('.quick-input-widget', { hasText: `go to line ${line}` }).waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

function lineOf(file, needle) {
  const lines = fs.readFileSync(path.join(WS, file), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  if (i < 0) { throw new Error(`${needle} not in ${file}`); }
  return i + 1;
}

(async () => {
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${PORT}` });
  const page = await context.newPage();
  globalThis.page = page;
  page.on('pageerror', (e) => log('pageerror', e.message));
  await page.goto(`http://127.0.0.1:${PORT}/?folder=${encodeURIComponent(WS)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'train.slurm' }).waitFor({ timeout: 90000 });
  log('workbench ready');

  await step('log opens with error squiggles from the server', async () => {
    await openFile(page, `logs/${CRASH_LOG}`);
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 90000 });
  });

  await step('hover over the flagged line shows the entry', async () => {
    const line = lineOf(`logs/${CRASH_LOG}`, '[rank2]: IndexError');
    await goToLine(page, line);
    await page.keyboard.press('Escape');
    // squiggles sit under the text layer: move the mouse to one instead of "hovering" the element
    const box = await page.locator('.monaco-editor .view-overlays .squiggly-error').first().boundingBox();
    await page.mouse.move(box.x + Math.min(40, box.width / 2), box.y + box.height / 2, { steps: 5 });
    await page.locator('.monaco-hover', { hasText: 'mltriage' }).first().waitFor({ timeout: 20000 });
    await page.screenshot({ path: path.join(SHOTS, 'hover.png') });
    await page.mouse.move(5, 5);
  });

  await step('Problems panel lists the findings', async () => {
    await page.keyboard.press('Control+Shift+M');
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'mltriage' }).first().waitFor({ timeout: 20000 });
  });

  await step('Diagnose Selection opens the diagnosis view', async () => {
    const first = lineOf(`logs/${CRASH_LOG}`, '[rank2]: Traceback');
    const last = lineOf(`logs/${CRASH_LOG}`, '[rank2]: IndexError');
    await page.locator('.monaco-editor .view-lines').first().click();
    await goToLine(page, first);
    for (let i = first; i <= last; i++) { await page.keyboard.press('Shift+ArrowDown'); }
    await command(page, 'mltriage: Diagnose Selection');
    await page.locator('.tabs-container .tab', { hasText: 'mltriage:' }).first().waitFor({ timeout: 30000 });
    // the webview (an iframe inside an iframe) shows the root cause and how to verify the fix
    const view = page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
    await view.locator('h2', { hasText: 'Root cause' }).waitFor({ timeout: 30000 });
    await view.locator('.title', { hasText: 'IndexError' }).waitFor();
    await view.locator('h2', { hasText: 'Verify' }).waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'diagnosis-view.png') });
  });

  await step('quick fix inserts the exports into train.slurm', async () => {
    const before = fs.readFileSync(path.join(WS, 'train.slurm'), 'utf8');
    await command(page, 'View: Close All Editors');
    await openFile(page, FIX_LOG);
    // the cursor onto the initiating rank's error (rank 1's "Detected mismatch" line), inside the match
    await goToLine(page, lineOf(FIX_LOG, '[rank1]: RuntimeError: Detected mismatch'));
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 60000 });
    await page.keyboard.press('Home');
    for (let i = 0; i < 40; i++) { await page.keyboard.press('ArrowRight'); }
    await page.keyboard.press('Control+.');
    const item = page.locator('.action-widget .monaco-list-row', { hasText: 'to train.slurm' }).first();
    await item.waitFor({ timeout: 20000 });
    await page.screenshot({ path: path.join(SHOTS, 'quickfix.png') });
    await item.click();
    // the edit lands in train.slurm's buffer (unsaved, so the user can review or undo it): save it
    const tab = page.locator('.tabs-container .tab', { hasText: 'train.slurm' }).first();
    await tab.waitFor({ timeout: 20000 });
    await tab.click();
    await page.keyboard.press('Control+S');
    const deadline = Date.now() + 20000;
    let after = before;
    while (after === before && Date.now() < deadline) { await new Promise((r) => setTimeout(r, 200)); after = fs.readFileSync(path.join(WS, 'train.slurm'), 'utf8'); }
    const lines = after.split('\n');
    const exportAt = lines.findIndex((l) => l.startsWith('export '));
    const headerEnd = lines.findIndex((l) => l.startsWith('# Fine-tune'));
    if (exportAt !== headerEnd + 2) { throw new Error(`exports not after the header:\n${after}`); }
    if (!(lines.findIndex((l) => l.startsWith('srun ')) > exportAt)) { throw new Error(`srun line moved:\n${after}`); }
    log('train.slurm now:\n' + after);
  });

  await step('a failing command in the terminal raises a notification', async () => {
    await command(page, 'Terminal: Create New Terminal');
    await page.locator('.terminal-wrapper .xterm').first().waitFor({ timeout: 30000 });
    await new Promise((r) => setTimeout(r, 3000)); // let bash start and shell integration attach
    await page.locator('.terminal-wrapper .xterm').first().click();
    // (see the integration test: output written in the first milliseconds can precede the reader)
    await page.keyboard.type(`sleep 1; cat logs/${CRASH_LOG}; (exit 1)`);
    await page.keyboard.press('Enter');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'mltriage:' }).first();
    await toast.waitFor({ timeout: 60000 });
    await toast.locator('.monaco-button', { hasText: 'Show diagnosis' }).waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'terminal-notification.png') });
  });

  await step('Diagnose Selection on the terminal selection', async () => {
    await command(page, 'View: Close All Editors');
    await page.locator('.terminal-wrapper .xterm').first().click();
    await command(page, 'Terminal: Select All');
    await page.locator('.terminal-wrapper .xterm').first().click({ button: 'right' });
    const item = page.locator('.context-view .action-item', { hasText: 'Diagnose Selection' }).first();
    await item.waitFor();
    await page.waitForTimeout(300); // the menu fades in; a click during the animation can be dropped
    await item.click();
    const closed = await item.waitFor({ state: 'hidden', timeout: 3000 }).then(() => true, () => false);
    if (!closed) { await page.keyboard.press('Enter'); } // the highlighted item, by keyboard
    const view = page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
    await view.locator('p.where', { hasText: 'terminal selection' }).waitFor({ timeout: 30000 });
    await view.locator('.title', { hasText: 'IndexError' }).waitFor();
  });

  await page.screenshot({ path: path.join(SHOTS, 'final.png') });
  await browser.close();
  console.log(`drive: ${passed} passed, 0 failed`);
})().catch(async (e) => {
  console.error('FAIL', e);
  try { await globalThis.page.screenshot({ path: path.join(SHOTS, 'fail.png') }); } catch { /* no page */ }
  console.log(`drive: ${passed} passed, 1 failed`);
  process.exit(1);
});
