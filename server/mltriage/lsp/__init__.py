"""The mltriage language server: diagnostics, hover, quick fixes and commands for ML run logs.

Each LSP feature lives in its own module and registers itself on the server in `app.build_server`.
"""

from __future__ import annotations

import logging
import sys


def main() -> None:
    """Start the server over stdio; logs go to stderr (the client shows them in its output channel)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from mltriage.lsp.app import build_server

    build_server().start_io()
