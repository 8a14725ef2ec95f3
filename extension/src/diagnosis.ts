// The parts of the server's "mltriage.diagnosis/v1" JSON the extension reads.
export interface FindingJson {
  signature: string;
  title: string;
  role: 'root-cause' | 'collateral' | 'context';
  severity: string;
  rank: number | null;
  host: string | null;
  source: string;
  line: number;
  root_cause: string;
  fix: { summary?: string; env: Record<string, string>; steps: string[]; commands: string[] };
  verify: string;
  facts: Record<string, string>;
  p2p_related?: boolean;
  count?: number;
  ranks?: number[];
}

export interface DiagnosisJson {
  schema?: string;
  status: 'failure' | 'healthy' | string;
  initiating_rank: number | null;
  initiating_host?: string | null;
  explanation?: string;
  findings: FindingJson[];
  root_cause_index?: number | null; // the engine's answer: index into findings, null when healthy
  ranks?: { rank: number; role: string; host: string | null; first_error: string | null; why: string }[];
  warnings?: string[];
}

// The server decides the root cause (Diagnosis.root_cause in model.py); the extension only reads it.
export function rootCause(d: DiagnosisJson): FindingJson | undefined {
  const i = d.root_cause_index;
  return i === null || i === undefined ? undefined : d.findings[i];
}

// One export line, as the server writes it (model.py export_line): `export NAME=value`, quoted for the shell.
export function exportLine(name: string, value: string): string {
  return `export ${name}=${shellQuote(value)}`;
}

export function exportsText(env: Record<string, string>): string {
  return Object.entries(env).map(([k, v]) => exportLine(k, v)).join('\n');
}

function shellQuote(value: string): string {
  if (value.includes('$(')) { return `"${value}"`; } // a computed value stays a command substitution
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'"'"'`)}'`;
}

export function headline(d: DiagnosisJson): string {
  const root = rootCause(d);
  if (!root) { return 'no known failure found'; }
  const rank = root.rank ?? d.initiating_rank;
  return `${root.title}${rank !== null && rank !== undefined ? ` (rank ${rank} failed first)` : ''}`;
}
