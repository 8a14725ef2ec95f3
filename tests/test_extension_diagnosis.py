"""The extension reads the engine's answers instead of deciding them itself.

``extension/src/diagnosis.ts`` is bundled with the repository's esbuild and run under node against
real ``mltriage diagnose --json`` documents: its root cause is ``findings[root_cause_index]``, and
its export lines are the server's (``model.export_line``) byte for byte. Skipped where the
extension's toolchain is not installed (``npm ci``).
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mltriage.engine import diagnose_path, diagnose_text
from mltriage.model import Fix, export_line

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
    computed = "$(ip -o -4 route show to default | awk '{print $5}')"
    assert export_line("NCCL_SOCKET_IFNAME", computed) == f'export NCCL_SOCKET_IFNAME="{computed}"'
    assert Fix(env={"A": "1", "B": "x y"}).exports() == ["export A=1", "export B='x y'"]


@pytest.fixture(scope="module")
def diagnosis_js(tmp_path_factory) -> Path:
    if not ESBUILD.exists() or shutil.which("node") is None:
        pytest.skip("the extension's toolchain is not installed (npm ci)")
    out = tmp_path_factory.mktemp("ext") / "diagnosis.js"
    subprocess.run([str(ESBUILD), str(ROOT / "extension" / "src" / "diagnosis.ts"), "--bundle", "--format=cjs",
                    "--platform=node", f"--outfile={out}"], check=True, capture_output=True)
    return out


def _node(module: Path, script: str, payload) -> object:
    code = f"const m = require({json.dumps(str(module))}); const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n{script}"
    r = subprocess.run(["node", "-e", code], input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_extension_reads_the_root_cause_the_engine_decided(diagnosis_js):
    docs = [diagnose_path(EXAMPLE).to_json(), diagnose_text("step 1 loss 0.5\n").to_json()]
    # a document where the first finding is not the root cause: the extension must not guess
    crafted = dict(docs[0], findings=list(reversed(docs[0]["findings"])))
    crafted["root_cause_index"] = len(crafted["findings"]) - 1 - docs[0]["root_cause_index"]
    docs.append(crafted)
    picked = _node(diagnosis_js, "console.log(JSON.stringify(input.map((d) => { const r = m.rootCause(d); "
                   "return r ? d.findings.indexOf(r) : null; })));", docs)
    assert picked == [d["root_cause_index"] for d in docs]
    assert picked[1] is None


def test_extension_writes_the_servers_export_lines(diagnosis_js):
    env = {"NCCL_P2P_DISABLE": "1", "TORCH_CUDA_ARCH_LIST": "9.0;10.0+PTX", "NCCL_DEBUG_SUBSYS": "INIT,NET GRAPH",
           "Q": "it's", "NCCL_SOCKET_IFNAME": "$(ip -o -4 route show to default | awk '{print $5}')"}
    text = _node(diagnosis_js, "console.log(JSON.stringify(m.exportsText(input)));", env)
    assert text == "\n".join(Fix(env=env).exports())
