"""An NCCL WARN followed by its error chain (``file:line -> N`` lines of the same thread) is where an
NCCL call failed: a failure that names the WARN's site, the result code and what it means.

Every line below is rendered from the exact format strings of the NCCL release named with it:
the WARN and INFO prefixes of ``src/include/debug.h`` (v2.3.x) and ``src/debug.cc`` (later), the chain
forms of ``src/include/core.h`` (v2.3.x) and ``src/include/checks.h``, and each WARN's own format at
the cited path and line of that tag (github.com/NVIDIA/nccl).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import procs
from mltriage.catalogue.nccl import CHAIN_MARKERS, NcclResult, chain_step
from mltriage.catalogue.store import default_catalogue
from mltriage.engine import diagnose_path, diagnose_text

CATALOGUE = default_catalogue()

# v2.3.5-5: debug.h WARN prefix "\n%s:%d:%d [%d] %s:%d NCCL WARN " (host, pid, tid, dev, __FILE__, __LINE__),
# INFO prefix "%s:%d:%d [%d] NCCL INFO "; core.h NCCLCHECKGOTO: INFO(ALL,"%s:%d -> %d", __FILE__, __LINE__, res).
# src/init.cu:150 commAlloc: WARN("rank %d exceeds ndev=%d", rank, ndev); return ncclInvalidArgument;
# src/init.cu:556 ncclCommInitRankSync: NCCLCHECKGOTO(commAlloc(newcomm, ndev, myrank), res, cleanup);
V2_3_5 = ("\nnode1:4172:4172 [0] init.cu:150 NCCL WARN rank 2 exceeds ndev=2\n"
          "node1:4172:4172 [0] NCCL INFO init.cu:556 -> 4\n")

# v2.12.7-1: debug.cc prefixes as above; checks.h NCCLCHECK "%s:%d -> %d" and NCCLCHECKTHREAD
# INFO(NCCL_INIT,"%s:%d -> %d [Async thread]", __FILE__, __LINE__, args->ret).
# src/bootstrap.cc:68 bootstrapNetRecv: WARN("Message truncated : received %d bytes instead of %d", recvSize, size);
# return ncclInternalError; callers: bootstrap.cc:307 (bootstrapAllGather), init.cc:462 (initTransportsRank),
# init.cc:904 (ncclCommInitRankSync), group.cc:57 (ncclAsyncThreadMain, NCCLCHECKTHREAD)
V2_12_7 = ("\nnode1:4172:4190 [1] bootstrap.cc:68 NCCL WARN Message truncated : received 4096 bytes instead of 64\n"
           "node1:4172:4190 [1] NCCL INFO bootstrap.cc:307 -> 3\n"
           "node1:4172:4190 [1] NCCL INFO init.cc:462 -> 3\n"
           "node1:4172:4190 [1] NCCL INFO init.cc:904 -> 3\n"
           "node1:4172:4190 [1] NCCL INFO group.cc:57 -> 3 [Async thread]\n")

# v2.18.3-1: checks.h SYSCHECKGOTO INFO(NCCL_ALL,"%s:%d -> %d (%s)", __FILE__, __LINE__, RES, strerror(errno)) and
# NCCLCHECK "%s:%d -> %d". src/misc/shmutils.cc:82 ncclShmOpen: WARN("Could not map %s size %zi, error: %s",
# shmPath, realShmSize, strerror(errno)); ret = ncclSystemError; then transport/shm.cc:114 (shmRecvSetup) NCCLCHECK
V2_18_3 = ("\nnode1:4172:4172 [0] misc/shmutils.cc:82 NCCL WARN Could not map /dev/shm/nccl-2Hc1Qd size 9637892, "
           "error: Cannot allocate memory\n"
           "node1:4172:4172 [0] NCCL INFO misc/shmutils.cc:58 -> 2 (Cannot allocate memory)\n"
           "node1:4172:4172 [0] NCCL INFO transport/shm.cc:114 -> 2\n")

# v2.30.7-1: debug.cc WARN "[%d] %s:%d (%s) NCCL WARN %s\n" after "%s:%d:%d " (dev, __FILE__, __LINE__, __func__);
# checks.h through INFO_LOC (debug.h "%s:%d (%s) " fmt): "-> %d", "-> %d (%s)", "-> %d [Async thread]".
# src/bootstrap.cc:1319 bootstrapClose: WARN("Unexpected connections are not empty"); return ncclInternalError;
# callers init.cc:322 (commFree), init.cc:2778 (commCleanup)
V2_30_7 = ("\nnode1:4172:4172 [0] bootstrap.cc:1319 (bootstrapClose) NCCL WARN Unexpected connections are not empty\n"
           "node1:4172:4172 [0] NCCL INFO init.cc:322 (commFree) -> 3\n"
           "node1:4172:4172 [0] NCCL INFO init.cc:2778 (commCleanup) -> 3 (Broken pipe)\n"
           "node1:4172:4172 [0] NCCL INFO group.cc:111 (ncclAsyncJobMain) -> 3 [Async thread]\n")

CASES = {
    "v2.3.5-5 core.h %s:%d -> %d": (V2_3_5, "src/init.cu:150", NcclResult.ncclInvalidArgument, "2.3.5-5"),
    "v2.12.7-1 checks.h -> %d [Async thread]": (V2_12_7, "src/bootstrap.cc:68", NcclResult.ncclInternalError, "2.12.7-1"),
    "v2.18.3-1 checks.h -> %d (%s)": (V2_18_3, "src/misc/shmutils.cc:82", NcclResult.ncclSystemError, "2.18.3-1"),
    "v2.30.7-1 checks.h INFO_LOC": (V2_30_7, "src/bootstrap.cc:1319", NcclResult.ncclInternalError, "2.30.7-1"),
}


def _covers(described: str, release: str) -> bool:
    """Whether ``NCCL 2.18.1-1–2.18.6-1, 2.19.3-1`` (release list order) includes ``release``."""
    names = [r.name for r in CATALOGUE.releases("nccl")]
    for part in described.removeprefix("NCCL ").split(" (")[0].split(", "):
        first, _, last = part.partition("–")
        if names.index(first) <= names.index(release) <= names.index(last or first):
            return True
    return False


@pytest.mark.skipif(not CATALOGUE.available, reason="catalogue data not generated")
@pytest.mark.parametrize("name", CASES)
def test_a_warn_followed_by_its_chain_is_a_failure_naming_its_site(name):
    log, site, code, release = CASES[name]
    d = diagnose_text(log)
    top = d.root_cause
    assert top is not None and top.is_error, [(f.title, f.severity) for f in d.findings]
    assert top.catalogue is not None and top.catalogue.project == "nccl"
    assert top.catalogue.site == site
    assert _covers(top.catalogue.releases, release)  # the WARN prefix's file:line narrows the range to releases holding it
    assert top.facts["nccl_result"] == code.name and top.facts["nccl_result_code"] == str(int(code))
    said = top.root_cause + " ".join(top.notes)  # a curated finding keeps its own text: the chain's result is a note
    assert f"{code.name} ({int(code)}: " in said
    assert top.facts["nccl_chain"].startswith(log.splitlines()[2].split("NCCL INFO ")[1].split(" ")[0])


@pytest.mark.parametrize("name", CASES)
def test_the_same_warn_without_its_chain_is_not_a_failure(name):
    # NCCL_DEBUG=WARN prints the WARN alone: nothing says the call failed for good (a retry may follow)
    warn_only = "".join(line + "\n" for line in CASES[name][0].splitlines() if "NCCL INFO" not in line)
    d = diagnose_text(warn_only)
    assert not [f for f in d.findings if f.is_error and f.generic]  # (a curated signature keeps its own level)


# (v2.30.7-1's WARN, which no curated cause names: only the chain can make it a failure)
def test_another_threads_chain_is_not_this_warns():
    # the chain lines of v2.30.7-1's case, logged by another thread (tid 4191) of the same process
    log = V2_30_7.replace("4172:4172 [0] NCCL INFO", "4172:4191 [0] NCCL INFO")
    assert not [f for f in diagnose_text(log).findings if f.is_error]


def test_a_chain_far_from_its_warn_is_not_its_chain():
    filler = "".join(f"node1:4172:4172 [0] NCCL INFO Channel {n:02d}/0 : 0[0] -> 1[1] via P2P/IPC\n" for n in range(80))
    lines = V2_30_7.split("\n")
    log = "\n".join(lines[:2]) + "\n" + filler + "\n".join(lines[2:])
    assert not [f for f in diagnose_text(log).findings if f.is_error]


def test_an_uncatalogued_warn_with_its_chain_is_a_failure_naming_the_prefix_site():
    # a WARN from a build outside the public releases (its message is in none of them), then
    # v2.21.5-1 checks.h NCCLCHECK lines
    log = ("\nnode1:4172:4172 [0] transport/net_plugin.cc:412 NCCL WARN NET/Vendor : qp 17 moved to error state 12\n"
           "node1:4172:4172 [0] NCCL INFO transport/net.cc:1020 -> 6\n"
           "node1:4172:4172 [0] NCCL INFO proxy.cc:1460 -> 6\n")
    d = diagnose_text(log)
    top = d.root_cause
    assert top is not None and top.is_error and top.catalogue is None
    assert top.facts["nccl_warn_site"] == "transport/net_plugin.cc:412"
    assert top.facts["nccl_result"] == "ncclRemoteError"
    assert "`transport/net_plugin.cc:412`" in top.root_cause and "remote process exited" in top.root_cause
    assert "qp 17 moved to error state 12" in top.title


# the chain forms of every v2.x release's checks.h (core.h in v2.3.x): an INFO/INFO_LOC call whose format holds "->"
_CHAIN_CALL = re.compile(r'INFO(_LOC)?\(\s*\w+\s*,\s*"([^"]*->[^"]*)"')
MIRROR = Path(os.environ.get("MLTRIAGE_MIRRORS", "/work/.mirror")) / "NVIDIA+nccl" / "repo"


def _git(*args: str) -> str:
    return procs.run(["git", f"--git-dir={MIRROR}", *args], capture_output=True, text=True, check=True).stdout


def _render(fmt: str, loc: bool) -> str:
    """A chain format with values: __FILE__/__LINE__ for the leading "%s:%d", a code, strerror's text."""
    text = ("init.cc:1357 (ncclCommInitRankFunc) " if loc else "") + fmt
    text = text.replace("%s:%d", "init.cc:1357", 1)
    text = text.replace("%d", "3", 1)
    return text.replace("%s", "Connection refused")


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no NVIDIA/nccl git mirror")
def test_every_chain_form_of_every_release_is_read():
    forms: dict[tuple[str, bool], str] = {}
    for tag in _git("tag", "--list", "v2.*").split():
        for path in ("src/include/checks.h", "src/include/core.h"):
            try:
                text = _git("show", f"{tag}:{path}")
            except subprocess.CalledProcessError:
                continue
            for m in _CHAIN_CALL.finditer(text):
                forms.setdefault((m.group(2), bool(m.group(1))), tag)
    assert len(forms) >= 6, forms  # "%s:%d -> %d" ... v2.30.7's INFO_LOC "-> %d [Async thread]"
    for (fmt, loc), tag in forms.items():
        message = "NCCL INFO " + _render(fmt, loc)
        step = chain_step(message)
        assert step is not None, (tag, fmt, message)
        assert (step.file, step.line, step.code) == ("init.cc", 1357, 3), (tag, fmt)
        assert any(m in message for m in CHAIN_MARKERS)
        # and a WARN followed by it is a failure
        log = ("\nnode1:1:1 [0] bootstrap.cc:572 NCCL WARN Unexpected connections are not empty\n"
               f"node1:1:1 [0] {message}\n")
        assert diagnose_text(log).root_cause.facts["nccl_chain"] == "init.cc:1357", (tag, fmt)


ROOT = Path(__file__).resolve().parents[2]


def test_recorded_warn_chains_name_their_site_and_code():
    # recorded on an H200 host (torch 2.11.0+cu130, NCCL 2.28.9, NCCL_DEBUG=INFO): the WARN and its two
    # "init.cc:N -> code" lines, interleaved with the Python traceback of the same process
    d = diagnose_path(ROOT / "corpus" / "gpu" / "nccl_warn_chain_comm_id.log")
    top = d.root_cause
    assert top.is_error and top.catalogue.site == "src/bootstrap.cc:102" and top.catalogue.releases.startswith("NCCL 2.28.9")
    assert top.facts["nccl_result"] == "ncclInvalidArgument" and top.facts["nccl_chain"].endswith("init.cc:160")
    # a curated signature owns this WARN; the chain's code joins it as a fact and a note
    d = diagnose_path(ROOT / "corpus" / "gpu" / "nccl_warn_chain_ifname.log")
    top = d.root_cause
    assert top.signature == "nccl-no-socket-interface" and top.facts["nccl_result"] == "ncclInvalidUsage"
    assert any("ncclInvalidUsage (5: invalid usage" in note for note in top.notes)
