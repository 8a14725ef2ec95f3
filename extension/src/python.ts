// Finding a Python for the server: our setting, else the Python extension's active interpreter,
// else python3 on PATH. Anything older than 3.11 is refused with a message that says what to do.
import * as vscode from 'vscode';
import { execFile } from 'child_process';
import * as os from 'os';

export const MIN_PYTHON: [number, number] = [3, 11];

export interface Interpreter {
  command: string;
  origin: 'setting' | 'python-extension' | 'PATH';
}

export interface PythonFacts {
  version: [number, number, number];
  implementation: string;
  platform: string;
  machine: string;
  executable: string;
}

function expandHome(p: string): string {
  return p.startsWith('~/') ? os.homedir() + p.slice(1) : p;
}

// The Python extension is optional: load its API only when it is installed.
async function fromPythonExtension(log: vscode.LogOutputChannel, resource?: vscode.Uri): Promise<string | undefined> {
  if (!vscode.extensions.getExtension('ms-python.python')) { return undefined; }
  try {
    const { PythonExtension } = await import('@vscode/python-extension');
    const api = await PythonExtension.api();
    const active = api.environments.getActiveEnvironmentPath(resource);
    const env = await api.environments.resolveEnvironment(active);
    return env?.executable.uri?.fsPath;
  } catch (err) {
    log.warn(`Python extension present but its interpreter could not be read: ${err}`);
    return undefined;
  }
}

export async function findInterpreter(log: vscode.LogOutputChannel): Promise<Interpreter> {
  const configured = vscode.workspace.getConfiguration('mltriage').get<string>('interpreter', '').trim();
  if (configured) { return { command: expandHome(configured), origin: 'setting' }; }
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const fromExt = await fromPythonExtension(log, resource);
  if (fromExt) { return { command: fromExt, origin: 'python-extension' }; }
  return { command: 'python3', origin: 'PATH' };
}

const FACTS_SCRIPT =
  'import sys, platform, json; print(json.dumps({"version": list(sys.version_info[:3]), ' +
  '"implementation": sys.implementation.name, "platform": sys.platform, "machine": platform.machine(), ' +
  '"executable": sys.executable}))';

export function readPythonFacts(command: string): Promise<PythonFacts> {
  return new Promise((resolve, reject) => {
    execFile(command, ['-I', '-c', FACTS_SCRIPT], { timeout: 15000 }, (err, stdout, stderr) => {
      if (err) { reject(new Error(`cannot run ${command}: ${(stderr || err.message).trim()}`)); return; }
      try { resolve(JSON.parse(stdout) as PythonFacts); } catch { reject(new Error(`${command} did not answer like a Python interpreter`)); }
    });
  });
}

export function versionProblem(facts: PythonFacts): string | undefined {
  const [major, minor] = facts.version;
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    return `mltriage needs Python ${MIN_PYTHON.join('.')} or newer, but ${facts.executable} is ${facts.version.join('.')}. ` +
      'Set "mltriage.interpreter" to a newer Python (or select one with the Python extension).';
  }
  return undefined;
}

// Fires when the Python extension's active interpreter changes (if it is installed).
export async function onPythonInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  if (!vscode.extensions.getExtension('ms-python.python')) { return undefined; }
  try {
    const { PythonExtension } = await import('@vscode/python-extension');
    const api = await PythonExtension.api();
    return api.environments.onDidChangeActiveEnvironmentPath(() => listener());
  } catch {
    return undefined;
  }
}
