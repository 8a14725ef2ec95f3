"""Small helpers shared by the server tests."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

import procs


def open_document(client: LanguageClient, path: Path, language_id: str = "log", text: str | None = None) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language_id, version=1, text=path.read_text() if text is None else text
            )
        )
    )
    return uri


async def wait_for_diagnostics(client: LanguageClient, uri: str, timeout: float = 30.0):
    """The next diagnostics published for ``uri`` (callers pop the old ones first)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if uri in client.diagnostics:
            return client.diagnostics[uri]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} within {timeout} s")


def line_of(path: Path, needle: str) -> int:
    """0-based number of the first line containing ``needle``."""
    for number, line in enumerate(path.read_text().splitlines()):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


class RawServer:
    """A language server process spoken to in raw JSON-RPC over its stdio (no client library)."""

    def __init__(self, process) -> None:
        self.process = process
        self._next = 0

    @classmethod
    async def start(cls, *command: str, env: dict[str, str] | None = None) -> "RawServer":
        process = await procs.start(  # its own process group, killed when the test ends
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
        )
        return cls(process)

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def receive(self, match) -> dict:
        while True:
            length = 0
            while (line := await self.process.stdout.readline()).strip():
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                raise AssertionError("server closed its output: " + (await self.process.stderr.read()).decode()[-2000:])
            message = json.loads(await self.process.stdout.readexactly(length))
            if match(message):
                return message

    async def request(self, method: str, params: dict | None = None, msg_id=None, timeout: float = 60) -> dict:
        self._next += 1
        msg_id = self._next if msg_id is None else msg_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        return await asyncio.wait_for(self.receive(lambda m: m.get("id") == msg_id and "method" not in m), timeout)

    async def initialize(self, root: Path | None = None, options: dict | None = None) -> dict:
        params = {"capabilities": {}, "rootUri": root.as_uri() if root else None}
        if options is not None:
            params["initializationOptions"] = options
        answer = await self.request("initialize", params)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    async def diagnostics_for(self, path: Path, timeout: float = 60) -> list[dict]:
        uri = path.as_uri()
        self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "log", "version": 1, "text": path.read_text()}}})
        message = await asyncio.wait_for(
            self.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri), timeout
        )
        return message["params"]["diagnostics"]

    async def stop(self) -> int:
        try:
            await self.request("shutdown", timeout=30)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            return await asyncio.wait_for(self.process.wait(), 30)
        finally:
            if self.process.returncode is None:
                self.process.kill()


def children_of(pid: int) -> list[int]:
    """Live (not zombie) child processes of ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def process_state(pid: int) -> str | None:
    """The state letter of a process ("Z": a zombie nobody reaped), None when it is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


async def wait_until(condition, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if value := condition():
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what} within {timeout} s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
