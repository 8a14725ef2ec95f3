"""The extension shows the server's answers instead of deciding them itself.

``extension/src/view.ts`` is bundled with the repository's esbuild and run under node against the
server's real answers (diagnosis JSON + ``view``): the root cause is the one triage chose, shown only
for a failure, the title once, Markdown rendered, export lines the server's byte for byte. Skipped
where the extension's toolchain is not installed (``npm ci``).
"""

import json
import shutil
from pathlib import Path

import pytest

from mltriage.engine import diagnose_path, diagnose_text
from mltriage.library import load_library
from mltriage.model import Fix, export_line
import procs

ROOT = Path(__file__).resolve().parent.parent
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
EXAMPLE = ROOT / "examples" / "torchrun-rank2-indexerror.log"


def test_root_cause_index_points_at_the_root_cause():
    d = diagnose_path(EXAMPLE)
    doc = d.to_json()
    assert doc["root_cause_index"] is not None
    root = doc["findings"][doc["root_cause_index"]]
    assert root["signature"] == d.root_cause.signature == "python-unhandled-exception"
    assert root["rank"] == doc["initiating_rank"] == 2
    healthy = diagnose_text("step 1 loss 0.5\ntraining finished\n").to_json()
    assert healthy["status"] == "healthy" and healthy["root_cause_index"] is None


def test_export_line_quotes_for_the_shell():
    assert export_line("NCCL_P2P_DISABLE", "1") == "export NCCL_P2P_DISABLE=1"
    # unquoted, the shell would run `10.0+PTX` as a command
    assert export_line("TORCH_CUDA_ARCH_LIST", "9.0;10.0+PTX") == "export TORCH_CUDA_ARCH_LIST='9.0;10.0+PTX'"
    # a value the library computes stays a command substitution; any other `$(` is text (issue 22)
    computed = load_library().get("nccl-no-socket-interface").fix_env["NCCL_SOCKET_IFNAME"]
    assert export_line("NCCL_SOCKET_IFNAME", computed) == f'export NCCL_SOCKET_IFNAME="{computed}"'
    assert export_line("NCCL_SOCKET_IFNAME", "$(hostname)") == "export NCCL_SOCKET_IFNAME='$(hostname)'"
    assert Fix(env={"A": "1", "B": "x y"}).exports() == ["export A=1", "export B='x y'"]


@pytest.fixture(scope="module")
def view_js(tmp_path_factory) -> Path:
    """The extension's view module, bundled as the .vsix bundles it (its `vscode` import stubbed:
    only the pure render functions run here)."""
    if not ESBUILD.exists() or shutil.which("node") is None:
        pytest.skip("the extension's toolchain is not installed (npm ci)")
    tmp = tmp_path_factory.mktemp("ext")
    (tmp / "vscode.js").write_text("module.exports = {};\n")
    out = tmp / "view.js"
    procs.run([str(ESBUILD), str(ROOT / "extension" / "src" / "view.ts"), "--bundle", "--format=cjs",
                    "--platform=node", f"--alias:vscode={tmp / 'vscode.js'}", f"--outfile={out}"], check=True, capture_output=True)
    return out


def _node(module: Path, script: str, payload) -> object:
    code = f"const m = require({json.dumps(str(module))}); const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n{script}"
    r = procs.run(["node", "-e", code], input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _answer(diagnosis):
    from mltriage.lsp.view import with_view

    return with_view(diagnosis)


def test_view_shows_the_servers_root_cause_title_once_and_its_markdown(view_js):
    answer = _answer(diagnose_path(EXAMPLE))
    html = _node(view_js, "console.log(JSON.stringify(m.renderDiagnosis(input, 'x.log')));", answer)
    root = answer["findings"][answer["root_cause_index"]]
    headline, rest = html.split("</h1>", 1)
    assert root["title"] in headline
    section = rest.split('<section class="root">', 1)[1].split('<div class="md explanation">', 1)[0]
    # the title is the headline's; the root-cause section goes on with where and what happened
    # (triage's explanation after it names the chain of failures, titles included)
    assert "Root cause" in section and root["title"] not in section
    assert "`" not in html.split("<pre", 1)[0]  # Markdown code spans rendered, no raw backticks
    assert "<code>" in html


def test_view_never_puts_warnings_under_root_cause(view_js):
    log = ROOT / "corpus" / "healthy" / "hf-trainer-bert-from-local-ckpt" / "console.log"
    answer = _answer(diagnose_path(log))
    assert answer["findings"] and answer["root_cause_index"] is None
    html = _node(view_js, "console.log(JSON.stringify(m.renderDiagnosis(input, 'x.log')));", answer)
    assert "Root cause" not in html and "No known failure" in html
    # a crafted answer whose engine fields point at a warning: the view still follows `view.root` only
    crafted = dict(answer, root_cause_index=0)
    html = _node(view_js, "console.log(JSON.stringify(m.renderDiagnosis(input, 'x.log')));", crafted)
    assert "Root cause" not in html


def test_view_writes_the_servers_export_lines(view_js):
    env = {"NCCL_P2P_DISABLE": "1", "TORCH_CUDA_ARCH_LIST": "9.0;10.0+PTX", "Q": "it's",
           "NCCL_SOCKET_IFNAME": "$(ip -o -4 route show to default | awk '{print $5}')"}
    d = diagnose_path(EXAMPLE)
    d.root_cause.fix.env = dict(env)
    html = _node(view_js, "console.log(JSON.stringify(m.renderDiagnosis(input, 'x.log')));", _answer(d))
    import html as h

    shown = h.unescape(html.split('<pre id="exports">', 1)[1].split("</pre>", 1)[0])
    assert shown == "\n".join(Fix(env=env).exports())


def test_no_server_logic_is_redone_in_the_extension():
    """ANSI stripping, export quoting, entry links and log suffixes have one owner: the server."""
    src = "\n".join(p.read_text() for p in (ROOT / "extension" / "src").glob("*.ts"))
    for redone in ("\\x1b", "shellQuote", "export ${", "root_cause_index]", "{log,out,err}", "URLSearchParams(Object.entries"):
        assert redone not in src, redone
