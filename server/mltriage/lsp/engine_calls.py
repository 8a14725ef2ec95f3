"""The language server's only doorway to the engine, imported lazily so `initialize` answers at once.

Diagnoses of text (`diagnose`) run in the engine worker process (`worker`), one at a time; the
server process itself only reads the library, for entries (`explain`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mltriage.lsp.text import normalise


# A made-up log of the commonest shapes (a rank's traceback, a launcher's failure line), diagnosed
# once when the engine process starts: the one-time costs of a first diagnosis (the engine's modules,
# the masking rules, the patterns these lines compile, the catalogue shards their words read) are paid
# while the editor is still starting, not on the first log the user opens (issue 22.5: 1.7 s of a
# 1.9 s first diagnosis, 0.17 s the second time). What a later diagnosis finds does not depend on it.
WARM_UP_TEXT = """[rank0]: Traceback (most recent call last):
[rank0]:   File "/tmp/train.py", line 3, in <module>
[rank0]:     main()
[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered
torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 1) of binary: python
"""


def warm_up() -> None:
    """Import the engine, load and compile the signature library, and diagnose `WARM_UP_TEXT` once,
    before the first document arrives."""
    import mltriage.engine  # noqa: F401
    import mltriage.engine.attach  # noqa: F401
    from mltriage.library import load_library

    load_library()
    diagnose(WARM_UP_TEXT, "warm-up.log").to_json()  # to_json: the masking the answer goes through


def diagnose(text: str, source: str, first_line: int = 1) -> Any:
    """Diagnose editor text (``source``: its path, which names the rank/host as in a log directory;
    ``first_line``: the document line the text starts at, for a selection)."""
    from mltriage.engine import diagnose_text
    from mltriage.engine.attach import attach_cached_probe

    diagnosis = diagnose_text(normalise(text), source, first_line=first_line)
    attach_cached_probe(diagnosis)  # the user's last `Run P2P Probe`, never a new GPU run
    return diagnosis


def explain(signature: str, facts: dict[str, str] | None) -> str:
    from mltriage.explain import render_entry_markdown

    return render_entry_markdown(signature, facts or None)


@lru_cache(maxsize=256)
def explain_cached(signature: str, facts: tuple[tuple[str, str], ...]) -> str:
    return explain(signature, dict(facts))


def known_signature(signature: str) -> bool:
    from mltriage.library import load_library

    return load_library().get(signature) is not None
