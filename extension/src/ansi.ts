// Terminal output as a person saw it: shell-integration marks (OSC 633/133), titles, colours and
// cursor moves removed; CR-rewritten progress lines reduced to what stayed on screen.
const OSC = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
const ESC_OTHER = /\x1b[@-Z\\-_]/g;

export function stripTerminalEscapes(data: string): string {
  const text = data.replace(OSC, '').replace(CSI, '').replace(ESC_OTHER, '');
  return text
    .split('\n')
    .map((line) => {
      const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
      if (!trimmed.includes('\r')) { return trimmed; }
      const parts = trimmed.split('\r').filter((p) => p.trim().length > 0);
      return parts.length ? parts[parts.length - 1] : '';
    })
    .join('\n');
}

// Keeps the last `limit` characters of a stream: a failure is at the end of a long output.
export class TailBuffer {
  private chunks: string[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}
  push(chunk: string): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
  }
  text(): string {
    const all = this.chunks.join('');
    return all.length > this.limit ? all.slice(all.length - this.limit) : all;
  }
}
