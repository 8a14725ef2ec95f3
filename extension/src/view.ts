// The diagnosis view: one webview panel that places what the server built (server/mltriage/lsp/view.py):
// the headline once, the root cause triage chose, the collateral ranks, the fix (copy / add to a launch
// script), how to verify, and the pictures (SVG from the server, coloured here by the theme's CSS
// variables). Strict CSP: no network, no inline script or style without the nonce.
import * as vscode from 'vscode';
import { DiagnosisJson, ProbeAnswer, ViewItem, ViewRoot } from './diagnosis';

export interface ViewActions {
  applyFix(root: ViewRoot): Promise<void>;
  showEntry(uri: string): Promise<void>;
}

export class DiagnosisView {
  private panel: vscode.WebviewPanel | undefined;
  private current: DiagnosisJson | undefined;
  private shown: { diagnosis: string; probes: string[] } = { diagnosis: '', probes: [] };
  private entryPanel: vscode.WebviewPanel | undefined;

  constructor(private readonly actions: ViewActions) {}

  get last(): DiagnosisJson | undefined { return this.current; }

  show(diagnosis: DiagnosisJson, origin: string): void {
    this.current = diagnosis;
    this.shown = { diagnosis: renderDiagnosis(diagnosis, origin), probes: [] };
    this.render();
  }

  // A probe's answer is added under the diagnosis shown (issue 22.6: it no longer replaces it); the
  // latest probe first.
  showProbe(report: ProbeAnswer, origin: string): void {
    this.shown.probes = [renderProbe(report, origin), ...this.shown.probes].slice(0, 4);
    this.render();
  }

  // An entry rendered (the server's HTML of its Markdown), in the view's column when the view is
  // open (no third column), else beside the editor.
  showEntry(signature: string, html: string): void {
    const column = this.panel?.viewColumn ?? vscode.ViewColumn.Beside;
    if (!this.entryPanel) {
      this.entryPanel = vscode.window.createWebviewPanel('mltriage.entry', `mltriage: ${signature}`, column, { enableScripts: false, localResourceRoots: [] });
      this.entryPanel.onDidDispose(() => { this.entryPanel = undefined; });
    }
    this.entryPanel.title = `mltriage: ${signature}`;
    this.entryPanel.webview.html = page(`<article class="entry">${html}</article>`, nonce());
    this.entryPanel.reveal(column, false);
  }

  private render(): void {
    const probes = this.shown.probes.map((p) => `<section class="probe">${p}</section>`).join('');
    this.open().webview.html = page(this.shown.diagnosis + probes, nonce());
  }

  private open(): vscode.WebviewPanel {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('mltriage.diagnosis', 'mltriage diagnosis', vscode.ViewColumn.Beside, {
        enableScripts: true, localResourceRoots: [],
      });
      this.panel.onDidDispose(() => { this.panel = undefined; });
      this.panel.webview.onDidReceiveMessage((msg) => this.onMessage(msg));
    }
    this.panel.reveal(undefined, true);
    return this.panel;
  }

  private async onMessage(msg: { type: string; text?: string; uri?: string }): Promise<void> {
    const root = this.current?.view.root;
    if (msg.type === 'copy' && typeof msg.text === 'string') {
      await vscode.env.clipboard.writeText(msg.text);
      void vscode.window.showInformationMessage('mltriage: copied to the clipboard.');
    } else if (msg.type === 'apply' && root) {
      await this.actions.applyFix(root);
    } else if (msg.type === 'entry' && typeof msg.uri === 'string') {
      await this.actions.showEntry(msg.uri);
    }
  }

  dispose(): void { this.panel?.dispose(); this.entryPanel?.dispose(); }
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

const items = (list: ViewItem[]) => `<ul>${list.map((f) =>
  `<li>${esc(f.title)} <span class="where">${esc(f.where)}</span> <a href="#" data-action="entry" data-uri="${esc(f.entry)}">entry</a></li>`).join('')}</ul>`;

// *_html fields are the server's Markdown rendering (raw HTML in the text already escaped there)
export function renderDiagnosis(d: DiagnosisJson, origin: string): string {
  const v = d.view;
  const r = v.root;
  const pictures = v.pictures.timeline || v.pictures.matrix
    ? `<section class="pictures"><h2>Picture</h2>${v.pictures.timeline ? `<figure id="timeline">${v.pictures.timeline}</figure>` : ''}${v.pictures.matrix ? `<figure id="matrix" class="matrix">${v.pictures.matrix}</figure>` : ''}</section>` : '';
  const body = !r
    ? `<p class="healthy">No known failure signature matched ${esc(origin)}.</p>
       ${v.context.length ? `<section><h2>Found (not a failure)</h2>${items(v.context)}</section>` : ''}
       ${pictures}`
    : `
    <section class="root">
      <h2>Root cause <span class="where">${esc(r.where)}</span></h2>
      <div class="md">${r.what_html}</div>
      ${r.notes_html.length ? `<ul class="notes">${r.notes_html.map((n) => `<li>${n}</li>`).join('')}</ul>` : ''}
      ${r.explanation_html ? `<div class="md explanation">${r.explanation_html}</div>` : ''}
      <button data-action="entry" data-uri="${esc(r.entry)}">Open the full entry</button>
    </section>
    ${pictures}
    ${v.collateral.length ? `<section><h2>Collateral (${v.collateral.length})</h2>${items(v.collateral)}</section>` : ''}
    <section class="fix">
      <h2>Fix</h2>
      ${r.fix_summary_html ? `<div class="md">${r.fix_summary_html}</div>` : ''}
      ${r.exports ? `<pre id="exports">${esc(r.exports)}</pre>
      <button data-action="copy" data-text="${esc(r.exports)}">Copy exports</button>
      <button data-action="apply">Add to launch script…</button>` : ''}
      ${r.flags_html.length ? `<ul class="md flags">${r.flags_html.map((f) => `<li>${f}</li>`).join('')}</ul>` : ''}
      ${r.relaunch ? `<p>This run's command with it:</p><pre id="relaunch">${esc(r.relaunch)}</pre>
      <button data-action="copy" data-text="${esc(r.relaunch)}">Copy command</button>` : ''}
      ${r.steps_html.length ? `<ol class="md">${r.steps_html.map((s) => `<li>${s}</li>`).join('')}</ol>` : ''}
      ${r.commands ? `<pre>${esc(r.commands)}</pre>` : ''}
    </section>
    ${r.verify ? `<section class="verify"><h2>Verify</h2><pre id="verify">${esc(r.verify)}</pre>
      <button data-action="copy" data-text="${esc(r.verify)}">Copy command</button></section>` : ''}
    ${v.context.length ? `<section><h2>Context</h2>${items(v.context)}</section>` : ''}`;
  return `<h1>${esc(v.headline)}</h1>
<p class="where" id="origin">From ${esc(origin)}</p>
${body}
${v.warnings.length ? `<section><h2>Warnings</h2><ul>${v.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul></section>` : ''}`;
}

export function renderProbe(report: ProbeAnswer, origin: string): string {
  const matrix = report.view?.matrix;
  return `<h2 class="probe-title">P2P probe: ${esc(report.machine_verdict ?? report.status ?? 'no result')}</h2>
<p class="where" id="origin">From ${esc(origin)}</p>
<p>${esc(report.message ?? report.error ?? '')}</p>
${matrix ? `<figure class="matrix probe-matrix">${matrix}</figure>` : ''}`;
}

function page(body: string, n: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${n}'; script-src 'nonce-${n}';">
<style nonce="${n}">
 body { color: var(--vscode-foreground); background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 0 1em; }
 h1 { font-size: 1.3em; } h2 { font-size: 1.1em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 2px; }
 .where { color: var(--vscode-descriptionForeground); font-size: 0.9em; margin-left: .5em; font-weight: normal; }
 code { font-family: var(--vscode-editor-font-family); background: var(--vscode-textCodeBlock-background); padding: 0 .2em; }
 pre { background: var(--vscode-textCodeBlock-background); font-family: var(--vscode-editor-font-family); padding: .5em; white-space: pre-wrap; }
 a { color: var(--vscode-textLink-foreground); }
 button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: 1px solid var(--vscode-contrastBorder, transparent); padding: 4px 10px; margin: 2px 4px 2px 0; cursor: pointer; }
 button:hover { background: var(--vscode-button-hoverBackground); }
 .healthy { color: var(--vscode-testing-iconPassed); }
 figure { margin: .5em 0; overflow-x: auto; } /* pictures at their own size, scrolled, never shrunk */
 svg text { fill: var(--vscode-foreground); font-family: var(--vscode-font-family); font-size: 13px; }
 svg text.legend { font-size: 12px; }
 .probe { border-top: 2px solid var(--vscode-panel-border); margin-top: 1.5em; }
 .entry h2 { font-size: 1.25em; } .entry h3 { font-size: 1.1em; }
 svg text.axis, svg text.legend, svg text.note { fill: var(--vscode-descriptionForeground); }
 svg .lane { stroke: var(--vscode-panel-border); stroke-width: 1; }
 svg .mark { stroke: var(--vscode-contrastBorder, var(--vscode-editor-background)); stroke-width: 1; }
 svg .initiator { fill: var(--vscode-errorForeground); }
 svg .collateral { fill: var(--vscode-editorWarning-foreground); }
 svg .quiet { fill: none; stroke: var(--vscode-testing-iconPassed); stroke-width: 2; }
 svg .silent { fill: none; stroke: var(--vscode-editorInfo-foreground); stroke-width: 2; stroke-dasharray: 2 2; }
 svg .cell { stroke: var(--vscode-panel-border); stroke-width: 1; fill-opacity: .45; }
 svg .cell.self { fill: var(--vscode-editor-inactiveSelectionBackground); fill-opacity: .3; }
 svg .v-ok { fill: var(--vscode-testing-iconPassed); }
 svg .v-slow { fill: var(--vscode-editorWarning-foreground); }
 svg .v-bad { fill: var(--vscode-errorForeground); }
 svg .v-off, svg .v-untested { fill: var(--vscode-disabledForeground); }
 svg text.value { font-weight: bold; } svg text.verdict { font-size: 10px; }
</style></head><body>
${body}
<script nonce="${n}">
 const vscode = acquireVsCodeApi();
 document.querySelectorAll('[data-action]').forEach((b) => b.addEventListener('click', (e) => {
   e.preventDefault();
   vscode.postMessage({ type: b.dataset.action, text: b.dataset.text, uri: b.dataset.uri });
 }));
</script></body></html>`;
}
