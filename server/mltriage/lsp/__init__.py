"""The mltriage language server: diagnostics, hover, quick fixes and commands for ML run logs.

Each LSP feature lives in its own module and registers itself on the server in `app.build_server`.
"""

from __future__ import annotations

import logging
import sys


def main() -> None:
    """Start the server over stdio; logs go to stderr (the client shows them in its output channel)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # pygls logs every message at INFO
    from mltriage.lsp.engine_process import EngineProcess

    engine = EngineProcess()
    engine.prestart()  # the engine process loads while this one imports pygls and lsprotocol
    from mltriage.lsp.app import build_server

    # The thread that reads the engine process's results unpickles them in small frames; hand the
    # GIL back to the event loop (hovers, cancellations) between them without waiting 5 ms.
    sys.setswitchinterval(0.001)

    sys.exit(build_server(engine).start_io())
