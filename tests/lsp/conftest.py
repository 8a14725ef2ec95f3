"""Start the real server (`python -m mltriage.server`) over stdio for every test, with the client
capabilities VS Code records, on a fresh copy of a small workspace."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

import procs

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
GUARD = Path(__file__).resolve().parent / "netguard"


def server_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "server"), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


class Isolated(ClientServerConfig):
    """pytest-lsp's server start, in a process group of its own that is killed when the test ends
    (pytest-lsp itself only terminates the server, and not when the fixture's teardown fails)."""

    async def start(self, devtools: str | None = None):
        client = self.client_factory()
        await client.start_io(*self.get_server_command(devtools), env=self.server_env, start_new_session=True)
        procs.track(client._server.pid)
        return client


def config(**env: str) -> ClientServerConfig:
    return Isolated(server_command=[sys.executable, "-m", "mltriage.server"], server_env=server_env(**env))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DATA / "workspace", root)
    shutil.copytree(DATA / "logs", root / "logs")
    return root


def accept_edits(client: LanguageClient) -> None:
    """Answer workspace/applyEdit like an editor that applies every edit; the edits are kept in
    ``client.applied_edits`` for the test to check."""
    client.applied_edits = []
    if types.WORKSPACE_APPLY_EDIT in client.protocol.fm.features:
        return

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.applied_edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)


async def start(client: LanguageClient, root: Path, **options) -> None:
    accept_edits(client)
    client.initialize_result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options={"debounceMs": 50, **options},
        )
    )


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace)
    yield
    await lsp_client.shutdown_session()
