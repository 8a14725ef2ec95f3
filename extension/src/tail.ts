// Keeps the last `limit` characters of a stream: a failure is at the end of a long output.
// (Escape sequences are the server's to strip: its reader cleans every line it reads.)
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
