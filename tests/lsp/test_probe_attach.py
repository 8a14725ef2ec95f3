"""Issue 3 in the editor: once the user has run the P2P probe, P2P-related diagnostics carry its
verdict. The probe runs for real in the server (worker subprocess and all); only NVML and CUDA are
fakes, named by the probe's documented environment variables."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import REPO, config, start
from helpers import open_document, wait_for_diagnostics

NVML = {"driver": "580.159.04", "gpus": [{"uuid": f"GPU-fake-{i}", "bus": f"00000000:{i + 6:02x}:00.0"} for i in range(2)]}
CORRUPT = {"corrupt": [{"src": 0, "dst": 1, "path": "p2p", "offset": 4096}]}


@pytest_lsp.fixture(
    config=config(
        MLTRIAGE_PROBE_FAKE=json.dumps(CORRUPT),
        MLTRIAGE_PROBE_FAKE_NVML=json.dumps(NVML),
        MLTRIAGE_CACHE_DIR=str(Path("/tmp") / f"mltriage-lsp-probe-attach-{__import__('os').getpid()}"),
    )
)
async def probe_client(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace)
    yield
    await lsp_client.shutdown_session()


async def test_p2p_diagnostic_carries_the_probe_verdict(probe_client: LanguageClient, workspace: Path):
    result = await probe_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="mltriage.runProbe", arguments=[{"refresh": True, "sizes": [4, 4099, 65539]}])
    )
    assert result["machine_verdict"] == "CORRUPT"
    sample = tomllib.loads((REPO / "signatures" / "nccl" / "nccl-p2p-peer-access-unsupported.toml").read_text())
    log = workspace / "logs" / "p2p.log"
    log.write_text(sample["samples"]["positive"][0]["text"])
    uri = open_document(probe_client, log)
    diagnostics = await wait_for_diagnostics(probe_client, uri)
    p2p = [d for d in diagnostics if d.data and d.data.get("p2p")]
    assert p2p, [d.code for d in diagnostics]
    # the probe's word is a note: in the hover, under the fix (the message is one line of what broke)
    hover = await probe_client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=p2p[0].range.start))
    assert "local probe: GPU0-\\>GPU1: CORRUPT at offset 4096" in hover.contents.value  # '>' escaped: log text
