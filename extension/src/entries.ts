// Serves "mltriage-entry:/<id>.md?fact=value" documents: the encyclopedia entry rendered by the
// server. The server writes these URIs (diagnostics' codeDescription, hovers, the view, quick fixes).
import * as vscode from 'vscode';
import type { ServerManager } from './server';

export const ENTRY_SCHEME = 'mltriage-entry';

export class EntryProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly server: ServerManager) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const { signature, facts } = entryRequest(uri);
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

// The signature and the log line's facts an entry URI names.
export function entryRequest(uri: vscode.Uri): { signature: string; facts: Record<string, string> } {
  return { signature: uri.path.replace(/^\//, '').replace(/\.md$/, ''), facts: Object.fromEntries(new URLSearchParams(uri.query)) };
}
