// Serves "mltriage-entry:/<id>.md?fact=value" documents: the encyclopedia entry rendered by the
// server. Diagnostics link here through codeDescription.href, so no `command:` URI is needed.
import * as vscode from 'vscode';
import type { ServerManager } from './server';

export const ENTRY_SCHEME = 'mltriage-entry';

export function entryUri(signature: string, facts: Record<string, string> = {}): vscode.Uri {
  const query = new URLSearchParams(Object.entries(facts).sort()).toString();
  return vscode.Uri.from({ scheme: ENTRY_SCHEME, path: `/${signature}.md`, query });
}

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
