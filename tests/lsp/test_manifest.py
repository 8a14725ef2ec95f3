"""The extension's manifest (package.json) against what the server and VS Code expect of it."""

from __future__ import annotations

import json
from pathlib import Path

from mltriage.lsp import code_actions

MANIFEST = json.loads((Path(__file__).resolve().parents[2] / "package.json").read_text())
COMMANDS = {c["command"]: c for c in MANIFEST["contributes"]["commands"]}


def test_context_menu_items_say_mltriage():
    """Issue 22.7: a menu shows a command's title without its category ("Diagnose Selection" among
    the editor's own items): every item we add to a context menu names mltriage itself."""
    shown = [(menu, item["command"]) for menu, items in MANIFEST["contributes"]["menus"].items()
             if menu != "commandPalette" for item in items]
    assert shown
    for menu, command in shown:
        entry = COMMANDS[command]
        assert entry["title"].startswith("mltriage: "), (menu, entry)
        assert "category" not in entry, entry  # the palette would say "mltriage: mltriage: ..."


def test_every_client_command_the_quick_fixes_run_is_contributed():
    client_side = [code_actions.COPY_COMMAND, code_actions.ENTRY_COMMAND, code_actions.PROBE_COMMAND, code_actions.PICK_COMMAND,
                   code_actions.APPLY_COMMAND, code_actions.APPLY_FLAG_COMMAND, code_actions.PICK_FLAG_COMMAND]
    assert [c for c in client_side if c not in COMMANDS] == []
