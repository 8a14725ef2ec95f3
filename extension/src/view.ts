// The diagnosis view: one webview panel, styled only with the theme's CSS variables, that shows the
// root cause, the ranks that failed as a consequence, the fix (with a copy button) and how to verify.
import * as vscode from 'vscode';
import { DiagnosisJson, FindingJson, exportsText, headline, rootCause } from './diagnosis';

export interface ViewActions {
  applyFix(finding: FindingJson): Promise<void>;
  showEntry(signature: string, facts: Record<string, string>): Promise<void>;
}

export class DiagnosisView {
  private panel: vscode.WebviewPanel | undefined;
  private current: DiagnosisJson | undefined;

  constructor(private readonly actions: ViewActions) {}

  get last(): DiagnosisJson | undefined { return this.current; }

  show(diagnosis: DiagnosisJson, origin: string): void {
    this.current = diagnosis;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('mltriage.diagnosis', 'mltriage diagnosis', vscode.ViewColumn.Beside, {
        enableScripts: true, localResourceRoots: [],
      });
      this.panel.onDidDispose(() => { this.panel = undefined; });
      this.panel.webview.onDidReceiveMessage((msg) => this.onMessage(msg));
    }
    this.panel.title = `mltriage: ${headline(diagnosis).slice(0, 60)}`;
    this.panel.webview.html = render(diagnosis, origin, nonce());
    this.panel.reveal(undefined, true);
  }

  private async onMessage(msg: { type: string; index?: number; text?: string }): Promise<void> {
    const finding = msg.index !== undefined ? this.current?.findings[msg.index] : undefined;
    if (msg.type === 'copy' && typeof msg.text === 'string') {
      await vscode.env.clipboard.writeText(msg.text);
      void vscode.window.showInformationMessage('mltriage: copied to the clipboard.');
    } else if (msg.type === 'apply' && finding) {
      await this.actions.applyFix(finding);
    } else if (msg.type === 'entry' && finding) {
      await this.actions.showEntry(finding.signature, finding.facts);
    }
  }

  dispose(): void { this.panel?.dispose(); }
}

function esc(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]!));
}

function nonce(): string {
  let out = '';
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < 32; i++) { out += chars.charAt(Math.floor(Math.random() * chars.length)); }
  return out;
}

function where(f: FindingJson): string {
  const bits = [];
  if (f.rank !== null && f.rank !== undefined) { bits.push(`rank ${f.rank}`); }
  if (f.host) { bits.push(`host ${f.host}`); }
  bits.push(`line ${f.line}`);
  return bits.join(' · ');
}

export function render(d: DiagnosisJson, origin: string, n: string): string {
  const root = rootCause(d);
  const rootIndex = root ? d.findings.indexOf(root) : -1;
  const collateral = d.findings.filter((f) => f.role === 'collateral');
  const context = d.findings.filter((f) => f.role === 'context');
  const exportsBlock = root ? exportsText(root.fix.env) : '';
  const body = !root
    ? `<p class="healthy">No known failure signature matched ${esc(origin)}.</p>`
    : `
    <section class="root">
      <h2>Root cause</h2>
      <p class="title">${esc(root.title)} <span class="where">${esc(where(root))}</span></p>
      <p>${esc(root.root_cause)}</p>
      ${d.explanation ? `<p class="explanation">${esc(d.explanation)}</p>` : ''}
      <button data-action="entry" data-index="${rootIndex}">Open the full entry</button>
    </section>
    ${collateral.length ? `<section><h2>Collateral (${collateral.length})</h2><ul>${collateral
      .map((f) => `<li>${esc(f.title)} <span class="where">${esc(where(f))}</span></li>`).join('')}</ul></section>` : ''}
    <section class="fix">
      <h2>Fix</h2>
      ${root.fix.summary ? `<p>${esc(root.fix.summary)}</p>` : ''}
      ${exportsBlock ? `<pre id="exports">${esc(exportsBlock)}</pre>
      <button data-action="copy" data-text="${esc(exportsBlock)}">Copy exports</button>
      <button data-action="apply" data-index="${rootIndex}">Add to launch script…</button>` : ''}
      ${root.fix.steps.length ? `<ol>${root.fix.steps.map((s) => `<li>${esc(s)}</li>`).join('')}</ol>` : ''}
      ${root.fix.commands.length ? `<pre>${esc(root.fix.commands.join('\n'))}</pre>` : ''}
    </section>
    ${root.verify ? `<section class="verify"><h2>Verify</h2><pre id="verify">${esc(root.verify)}</pre>
      <button data-action="copy" data-text="${esc(root.verify)}">Copy command</button></section>` : ''}
    ${context.length ? `<section><h2>Context</h2><ul>${context
      .map((f) => `<li>${esc(f.title)} <span class="where">${esc(where(f))}</span></li>`).join('')}</ul></section>` : ''}`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${n}'; script-src 'nonce-${n}';">
<style nonce="${n}">
 body { color: var(--vscode-foreground); background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 0 1em; }
 h1 { font-size: 1.3em; } h2 { font-size: 1.1em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 2px; }
 .where { color: var(--vscode-descriptionForeground); font-size: 0.9em; margin-left: .5em; }
 .title { font-weight: bold; color: var(--vscode-errorForeground); }
 pre { background: var(--vscode-textCodeBlock-background); font-family: var(--vscode-editor-font-family); padding: .5em; white-space: pre-wrap; }
 button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 4px 10px; margin: 2px 4px 2px 0; cursor: pointer; }
 button:hover { background: var(--vscode-button-hoverBackground); }
 .healthy { color: var(--vscode-testing-iconPassed); }
</style></head><body>
<h1>mltriage: ${esc(headline(d))}</h1>
<p class="where">From ${esc(origin)}</p>
${body}
<script nonce="${n}">
 const vscode = acquireVsCodeApi();
 document.querySelectorAll('button[data-action]').forEach((b) => b.addEventListener('click', () => {
   const index = b.dataset.index !== undefined ? Number(b.dataset.index) : undefined;
   vscode.postMessage({ type: b.dataset.action, index, text: b.dataset.text });
 }));
</script></body></html>`;
}
