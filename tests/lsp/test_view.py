"""The view payload: what the editor shows of a diagnosis, built by the server (lsp/view.py,
lsp/pictures.py) and returned by `mltriage.diagnoseText` as ``view``; the extension only places it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from mltriage.model import export_line
import procs

REPO = Path(__file__).resolve().parents[2]


async def execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=list(arguments)))


async def test_root_cause_is_the_engines_and_the_fix_is_the_servers(client: LanguageClient, workspace: Path):
    text = (workspace / "logs" / "torchrun_collective_mismatch.log").read_text()
    result = await execute(client, "mltriage.diagnoseText", {"text": text, "source": "<terminal>"})
    view = result["view"]
    root = view["root"]
    # the one answer: triage's root_cause_index, not a choice made here
    assert root["index"] == result["root_cause_index"]
    finding = result["findings"][result["root_cause_index"]]
    assert root["signature"] == finding["signature"]
    assert view["headline"].startswith(finding["title"])
    assert f"rank {result['initiating_rank']} failed first" in view["headline"]
    # exports exactly as every other output writes them
    assert root["exports"] == "\n".join(export_line(k, v) for k, v in finding["fix"]["env"].items())
    assert root["entry"].startswith(f"mltriage-entry:/{finding['signature']}.md")
    # the root cause is not listed again among the others
    assert root["index"] not in [i["index"] for i in view["collateral"] + view["context"]]
    assert view["notice"].startswith(view["headline"])


async def test_markdown_is_rendered_and_html_in_the_log_is_escaped(client: LanguageClient, workspace: Path):
    log = (workspace / "logs" / "torchrun_python_exception.log").read_text()
    # a log line can carry markup: it must reach the view as text, never as elements
    hostile = log.replace("IndexError: ", "IndexError: <img src=x onerror=alert(1)> ", 1)
    assert hostile != log
    view = (await execute(client, "mltriage.diagnoseText", hostile))["view"]
    root = view["root"]
    # the *_html fields are inserted as HTML; every other field is text the view escapes
    html = json.dumps({k: v for k, v in root.items() if k.endswith("_html")})
    assert "&lt;img" in html
    assert "<img" not in html
    # the fix steps' Markdown: code spans become <code>, not raw backticks
    steps = " ".join(view["root"]["steps_html"])
    assert "<code>" in steps and "`" not in steps, steps


async def test_timeline_marks_the_initiator_once_and_every_rank(client: LanguageClient, workspace: Path):
    logs = workspace / "logs"
    scenario = json.loads((logs / "torchrun_python_exception.scenario.json").read_text())
    result = await execute(client, "mltriage.diagnoseText", (logs / "torchrun_python_exception.log").read_text())
    svg = result["view"]["pictures"]["timeline"]
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    ranks = sorted(r["rank"] for r in result["ranks"])
    assert len(ranks) >= 2
    assert re.findall(r">rank (\d+)</text>", svg) == [str(r) for r in ranks]
    initiators = re.findall(r'class="mark initiator"[^>]*><title>rank (\d+):', svg)
    assert initiators == [str(scenario["initiating_rank"])]
    assert svg.count('class="mark collateral"') >= 2  # the collateral ranks (plus the legend)
    # themed by class only: no colour, no inline style, no external reference
    assert not re.search(r"fill=|stroke=|style=|href=|https?:", svg.replace('xmlns="http://www.w3.org/2000/svg"', ""))


async def test_probe_report_matrix_shows_verdicts_and_bandwidth(client: LanguageClient):
    # a real report from a 2×H200 node (bench/probe/RESULTS.md)
    report = (REPO / "bench" / "probe" / "h200x2-final.json").read_text()
    answer = await execute(client, "mltriage.probeView", {"text": report})
    svg = answer["view"]["matrix"]
    pairs = {(p["src"], p["dst"]): p for p in json.loads(report)["pairs"]}
    assert svg.count('class="cell v-ok"') == sum(p["verdict"] == "OK" for p in pairs.values()) == 2
    for p in pairs.values():
        assert f"GPU{p['src']}→GPU{p['dst']}: OK, {p['bandwidth']['p2p_gbps']:.1f} GB/s" in svg
        assert f">{p['bandwidth']['p2p_gbps']:.0f}</text>" in svg


async def test_probe_view_refuses_what_is_not_a_report(client: LanguageClient):
    import pytest
    from pygls.exceptions import JsonRpcInvalidParams

    with pytest.raises(JsonRpcInvalidParams, match="not a probe report"):
        await execute(client, "mltriage.probeView", {"text": '{"schema": "something else"}'})


async def test_a_failed_command_that_matched_nothing_still_names_its_error_line(client: LanguageClient, tmp_path: Path):
    # real output of a command that fails with an error no signature knows: pip with no index
    run = procs.run(
        [sys.executable, "-m", "pip", "install", "--no-index", "--find-links", str(tmp_path), "mltriage-no-such-package"],
        capture_output=True, text=True,
    )
    assert run.returncode != 0
    output = run.stdout + run.stderr
    result = await execute(client, "mltriage.diagnoseText", {"text": output, "source": "<terminal>"})
    # pip's "ERROR: Could not find a version ..." is an error-level line no entry names: the root says it, in its words
    assert result["status"] == "failure"
    root = result["view"]["root"]
    assert root is not None and root["signature"] == "error-logged-unrecognised", root
    assert "mltriage-no-such-package" in json.dumps(root), root


async def test_a_log_whose_findings_are_only_info_or_warning_has_no_root_cause(client: LanguageClient):
    # recorded healthy runs that still carry an info-level finding each (corpus/healthy/)
    for name in ("hf-trainer-bert-from-local-ckpt", "deepspeed-cpu-zero1"):
        (log,) = sorted((REPO / "corpus" / "healthy" / name).glob("*.log"))
        result = await execute(client, "mltriage.diagnoseText", log.read_text())
        assert result["findings"] and all(f["severity"] in ("info", "warning") for f in result["findings"]), name
        assert result["root_cause_index"] is None
        view = result["view"]
        assert view["root"] is None and view["headline"] == "no known failure found"
        assert [i["signature"] for i in view["context"]] == [f["signature"] for f in result["findings"]]


async def test_timeline_is_legible_uses_the_launchers_timestamps_and_its_legend_names_what_is_drawn(client: LanguageClient, workspace: Path):
    """Issue 22.6: drawn at its own size (not scaled to the panel: the legend stays 12 px), placed by
    the engine's time order from torchrun's stamped lines (not "no timestamps"), the initiator
    first, and the legend lists only the kinds of marks drawn."""
    for log, initiator in (("torchrun_sigkill.log", 1), ("torchrun_collective_mismatch.log", 1), ("torchrun_python_exception.log", 2)):
        result = await execute(client, "mltriage.diagnoseText", (workspace / "logs" / log).read_text())
        svg = result["view"]["pictures"]["timeline"]
        width, height = map(int, re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"', svg).groups())
        assert width >= 700 and height >= 34 + 28 * len(result["ranks"]), (width, height)
        axis = re.search(r'class="axis"[^>]*>([^<]*)<', svg).group(1)
        assert "timestamps" in axis and "no line has a timestamp" not in axis, axis
        marks = [(int(x), int(rank), cls) for cls, x, rank in re.findall(
            r'<circle class="mark (\w+)" cx="(\d+)" cy="\d+" r="\d+"><title>rank (\d+):', svg)]
        first = min(marks)
        assert (first[1], first[2]) == (initiator, "initiator"), (log, marks)
        legend = re.findall(r'class="legend"[^>]*>([^<]*)<', svg)
        drawn = {cls for _, _, cls in marks}
        assert len(legend) == len(drawn), (legend, drawn)
        assert ("no error of its own" in legend) == ("quiet" in drawn)


async def test_a_topology_pasted_in_the_log_draws_the_gpu_matrix(client: LanguageClient):
    """Issue 22.6: the P2P matrix from what the log shows (nvidia-smi topo -m of a 2×H200 node,
    corpus/healthy/nvidia-smi-h200x2), not only from this machine's cached probe."""
    text = (REPO / "corpus" / "healthy" / "nvidia-smi-h200x2" / "nvidia-smi-topo-m.log").read_text()
    result = await execute(client, "mltriage.diagnoseText", text)
    svg = result["view"]["pictures"]["matrix"]
    assert "pasted in the log: nvidia-smi topo -m" in svg
    assert re.findall(r'<title>(GPU\d→GPU\d): ', svg) == ["GPU0→GPU1", "GPU1→GPU0"]
    assert svg.count(">NV18<") == 2


async def test_an_entry_is_rendered_for_the_view(client: LanguageClient):
    """Issue 22.6: 'Open the full entry' shows the entry rendered, not its Markdown; the facts of
    the log line stay text (no element made from them)."""
    facts = {"exception_message": "<img src=https://attacker.example/x.png> `x`", "rank": "3"}
    answer = await execute(client, "mltriage.entryView", "cuda-oom", facts)
    html = answer["html"]
    assert answer["signature"] == "cuda-oom"
    assert "<h2>" in html and "<h3>Fix</h3>" in html and "<pre><code" in html
    assert "## " not in html and "```" not in html
    assert "<img" not in html and "&lt;img" in html


async def test_the_notice_of_a_failed_command_is_plain_text(client: LanguageClient, workspace: Path):
    """Issue 22.3: a notification shows no Markdown: the root cause's code spans without backticks."""
    result = await execute(client, "mltriage.diagnoseText", (workspace / "logs" / "torchrun_python_exception.log").read_text())
    assert "(main)" in result["view"]["notice"] and "`" not in result["view"]["notice"], result["view"]["notice"]
