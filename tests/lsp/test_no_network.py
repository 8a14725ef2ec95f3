"""No network access anywhere in the product, shown two ways:

- in-process: every language-server feature runs under an audit hook (`netguard`) that records and
  refuses any socket connect/bind/sendto or name lookup;
- at the kernel: the CLI (every command and output form, the GPU probe included) and a whole
  language-server session run inside a network namespace of their own (`unshare -n`) under
  `strace -f`, and the syscall record must hold no ``connect()`` to anything but an AF_UNIX socket
  and no internet socket at all. Where unshare or strace is missing or not permitted the test
  says so and skips (CI runs as root, where both work).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

import procs
from conftest import DATA, GUARD, Isolated, server_env, start
from helpers import open_document, wait_for_diagnostics

GUARD_LOG = Path(tempfile.mkdtemp(prefix="mltriage-netguard-")) / "netguard.log"
_ENV = server_env(MLTRIAGE_NETGUARD_LOG=str(GUARD_LOG))
_ENV["PYTHONPATH"] = f"{GUARD}{os.pathsep}{_ENV['PYTHONPATH']}"
SERVER = [sys.executable, "-m", "mltriage.server"]


# ---- the kernel-level audit ----------------------------------------------------------------
def audit_command(trace: Path) -> tuple[list[str] | None, str]:
    """The prefix that runs a command without a network under a syscall record, or None and why."""
    strace, unshare = shutil.which("strace"), shutil.which("unshare")
    if strace is None:
        return None, "strace is not installed (Debian: apt-get install strace)"
    if unshare is None:
        return None, "unshare (util-linux) is not installed"
    namespace = ["-n"] if os.geteuid() == 0 else ["-r", "-n"]  # without root: a user namespace too
    # --seccomp-bpf: only the traced calls stop the process (ptrace on every call made lint 4-5x slower)
    prefix = [strace, "-f", "-qq", "--seccomp-bpf", "-e", "signal=none", "-e", "trace=%network,execve", "-o", str(trace), unshare, *namespace]
    try:
        check = procs.run([*prefix, "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"strace/unshare could not start: {exc}"
    if check.returncode != 0:
        return None, f"strace + unshare {' '.join(namespace)} is not permitted here: {check.stderr.strip()[:300]}"
    return prefix, ""


_INET_SOCKET = re.compile(r"\bsocket\((?:AF_INET|AF_INET6|PF_INET|PF_INET6)\b")
_CONNECT = re.compile(r"\bconnect\(\d+, \{sa_family=(\w+)")


def network_syscalls(trace: Path) -> tuple[list[str], int]:
    """(lines that reach past AF_UNIX, number of programs traced) in an strace record."""
    violations, programs = [], 0
    for line in trace.read_text(errors="replace").splitlines():
        if " execve(" in line and line.rstrip().endswith("= 0"):
            programs += 1
        connect = _CONNECT.search(line)
        if (connect and connect.group(1) != "AF_UNIX") or _INET_SOCKET.search(line) or ("connect(" in line and not connect):
            violations.append(line)
    return violations, programs


def test_the_audit_sees_a_connect(tmp_path: Path):
    """The audit itself: a program that does try to connect is caught (so a clean record means something)."""
    trace = tmp_path / "trace.txt"
    prefix, reason = audit_command(trace)
    if prefix is None:
        pytest.skip(reason)
    procs.run([*prefix, sys.executable, "-c",
                    "import socket\ntry: socket.create_connection(('192.0.2.1', 443), timeout=1)\nexcept OSError: pass"],
                   capture_output=True, timeout=60)
    violations, programs = network_syscalls(trace)
    assert programs >= 2 and any("AF_INET" in line for line in violations), trace.read_text()[-2000:]


CLI_RUNS = [
    ["diagnose", str(DATA / "logs")],
    ["diagnose", str(DATA / "logs"), "--json"],
    ["diagnose", str(DATA / "logs"), "--sarif"],
    ["diagnose", str(DATA / "logs" / "torchrun_sigkill.log"), "--probe"],
    ["diagnose", "-"],
    ["explain", "nccl-socket-connect-failed"],
    ["signatures", "list"],
    ["signatures", "lint"],
    ["probe", "--json", "--timeout", "60"],
]


@pytest.mark.parametrize("arguments", CLI_RUNS, ids=[" ".join(a[:1] + a[2:]) or a[0] for a in CLI_RUNS])
def test_cli_makes_no_network_syscall(arguments: list[str], tmp_path: Path):
    trace = tmp_path / "trace.txt"
    prefix, reason = audit_command(trace)
    if prefix is None:
        pytest.skip(reason)
    stdin = (DATA / "logs" / "nccl_socket_ifname.log").read_bytes()
    env = server_env(MLTRIAGE_CACHE_DIR=str(tmp_path / "cache"))
    run = procs.run([*prefix, sys.executable, "-m", "mltriage", *arguments], input=stdin, capture_output=True,
                         env=env, timeout=240)
    assert "internal error" not in run.stderr.decode(errors="replace"), run.stderr[-2000:]
    violations, programs = network_syscalls(trace)
    assert programs >= 2, f"the trace must have followed the CLI: {trace.read_text()[:2000]}"
    assert violations == []


# ---- every language-server feature ---------------------------------------------------------
async def exercise_every_feature(client: LanguageClient, workspace: Path) -> None:
    uris = []
    for log in sorted((workspace / "logs").glob("*.log")):
        uris.append(open_document(client, log))
    for uri in uris:
        diagnostics = await wait_for_diagnostics(client, uri)
        for d in diagnostics:
            await client.text_document_hover_async(
                types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start)
            )
            actions = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=d.range,
                    context=types.CodeActionContext(diagnostics=[d]),
                )
            )
            for action in actions or []:
                # (lsprotocol parses any action that carries a command as a Command: no data there)
                if getattr(action, "data", None):
                    await client.code_action_resolve_async(action)
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="mltriage.explain", arguments=[d.code, d.data["facts"]])
            )
    text = (workspace / "logs" / "torchrun_sigkill.log").read_text()
    for command, arguments in [
        ("mltriage.diagnoseText", [text]),
        ("mltriage.runProbe", []),
        ("mltriage.launchScripts", []),
        ("mltriage.insertExports", [{"script": (workspace / "scripts" / "launch.sh").as_uri(), "env": {"NCCL_DEBUG": "INFO"}}]),
    ]:
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=arguments))


@pytest_lsp.fixture(config=Isolated(server_command=SERVER, server_env=_ENV))
async def guarded(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, debounceMs=10, progressLines=10)
    yield
    await lsp_client.shutdown_session()


async def test_all_features_without_network(guarded: LanguageClient, workspace: Path):
    await exercise_every_feature(guarded, workspace)
    lines = GUARD_LOG.read_text().splitlines()
    assert lines and lines[0].startswith("armed"), "the audit hook must have been active in the server"
    assert [line for line in lines if line.startswith("VIOLATION")] == []


SERVER_TRACE = Path(tempfile.mkdtemp(prefix="mltriage-strace-")) / "server.trace"
_SERVER_AUDIT, _NO_AUDIT_REASON = audit_command(SERVER_TRACE)


@pytest_lsp.fixture(config=Isolated(server_command=[*(_SERVER_AUDIT or []), *SERVER], server_env=server_env()))
async def audited(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, debounceMs=10, progressLines=10)
    yield  # the test ends the session itself: the record is complete once the server has exited


async def test_a_server_session_makes_no_network_syscall(audited: LanguageClient, workspace: Path):
    if _SERVER_AUDIT is None:
        await audited.shutdown_session()
        pytest.skip(_NO_AUDIT_REASON)
    await exercise_every_feature(audited, workspace)
    await audited.shutdown_session()  # waits for the process (and strace) to exit
    violations, programs = network_syscalls(SERVER_TRACE)
    assert programs >= 2, f"the trace must have followed the server: {SERVER_TRACE.read_text()[:2000]}"
    assert violations == []

