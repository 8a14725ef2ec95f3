import { Diagnosis } from './generated/diagnosis';

// The parts of the server's answer the extension reads: the "mltriage.diagnosis/v1" JSON plus `view`,
// what the editor shows of it, built by the server (server/mltriage/lsp/view.py). Nothing here decides
// or formats a diagnosis: the root cause, the headline, export lines and entry links are the server's.
export interface ViewItem {
  index: number;
  signature: string;
  title: string;
  where: string;
  line: number;
  severity: string;
  entry: string; // mltriage-entry: URI
}

export interface ViewRoot extends ViewItem {
  what_html: string;
  notes_html: string[];
  explanation_html: string;
  fix_summary_html: string;
  env: Record<string, string>;
  exports: string;
  flags_html: string[]; // each launch-command flag of the fix, as one line of HTML
  relaunch: string; // the log's own launch command with those flags ('' when the log shows none)
  steps_html: string[];
  commands: string;
  verify: string;
}

export interface DiagnosisView {
  headline: string;
  status: string;
  root: ViewRoot | null; // triage's root cause; null when nothing failed (warnings are never one)
  collateral: ViewItem[];
  context: ViewItem[];
  warnings: string[];
  notice: string; // the one line a notification shows for a failed command ('' when nothing says error)
  pictures: { timeline: string; matrix: string }; // SVG markup, classes only (themed by the view's CSS)
}

// The document itself is typed from the server's model (generated/diagnosis.ts); the server adds `view`.
export interface DiagnosisJson extends Diagnosis {
  view: DiagnosisView;
}

export interface ProbeAnswer {
  machine_verdict?: string;
  message?: string;
  status?: string;
  error?: string;
  view?: { matrix: string };
}
