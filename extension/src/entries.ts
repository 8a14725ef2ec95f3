// Serves "mltriage-entry:/<id>.md?fact=value" documents: the encyclopedia entry rendered by the
// server. The server writes these URIs (diagnostics' codeDescription, hovers, the view, quick fixes).
import * as vscode from 'vscode';
import type { ServerManager } from './server';

export const ENTRY_SCHEME = 'mltriage-entry';

export class EntryProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly server: ServerManager) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const signature = uri.path.replace(/^\//, '').replace(/\.md$/, '');
    const facts = Object.fromEntries(new URLSearchParams(uri.query));
    try {
      return await this.server.executeCommand<string>('mltriage.explain', signature, facts);
    } catch (err) {
      return `# ${signature}\n\nThis entry could not be shown: ${(err as Error).message}\n`;
    }
  }
}

// A server-written entry URI, or a bare signature id typed by the user (no facts).
export function entryTarget(uriOrSignature: string): vscode.Uri {
  return uriOrSignature.startsWith(`${ENTRY_SCHEME}:`)
    ? vscode.Uri.parse(uriOrSignature)
    : vscode.Uri.from({ scheme: ENTRY_SCHEME, path: `/${uriOrSignature}.md` });
}
