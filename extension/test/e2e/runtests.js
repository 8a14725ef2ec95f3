// Runs the integration tests (mocha inside code-server's extension host) and exits with their result.
// code-server ignores --extensionTestsPath; with `enable-smoke-test-driver` the workbench takes the
// extensionDevelopmentPath/extensionTestsPath from the URL payload and reports the exit code through
// window.codeAutomationExit.
// usage: node runtests.js PORT EXTENSION_DIR TESTS_INDEX WORKSPACE
const { launch } = require('./browser');
const [port, dev, tests, folder] = process.argv.slice(2);
const host = `127.0.0.1:${port}`;
(async () => {
  const browser = await launch();
  const page = await browser.newPage();
  const done = new Promise((resolve) => page.exposeFunction('codeAutomationExit', (code) => resolve(code)));
  let summary = 'integration: 0 passed, 1 failed';
  page.on('console', (m) => {
    const t = m.text();
    const counts = /mltriage-test: (\d+ passed, \d+ failed)/.exec(t);
    if (counts) { summary = `integration: ${counts[1]}`; }
    if (process.env.ALLCONSOLE || /passing|failing|passed|failed|✔|✓|[0-9]+\) |Error|mltriage-test|mltriage-timing/.test(t)) { console.log('[vscode]', t.slice(0, 500)); }
  });
  const payload = [['extensionDevelopmentPath', `vscode-remote://${host}${dev}`], ['extensionTestsPath', `vscode-remote://${host}${tests}`]];
  await page.goto(`http://${host}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  const code = await Promise.race([done, new Promise((r) => setTimeout(() => r('timeout after 300 s'), 300000))]);
  console.log('integration tests exit code:', code);
  console.log(summary);
  await browser.close();
  process.exit(code === 0 ? 0 : 1);
})().catch((e) => { console.error(e); process.exit(1); });
