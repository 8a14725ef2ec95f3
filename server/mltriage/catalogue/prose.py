"""Written meaning for catalogue entries, kept in ``prose/<entry id>.toml`` so that it survives
regeneration (entry ids are stable). A curated encyclopedia entry, where one covers the message,
says more; prose is for messages no signature covers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

PROSE = Path(__file__).resolve().parent / "prose"


@dataclass(frozen=True, slots=True)
class Prose:
    meaning: str  # what the message means, in one or two sentences
    when: str = ""  # when it happens
    solutions: list[str] = field(default_factory=list)
    example_fix: str = ""


def prose_for(entry_id: str, root: Path = PROSE) -> Prose | None:
    if not entry_id.replace("-", "").replace("_", "").isalnum():
        return None  # ids are project-hash; anything else never names a file
    try:
        text = (root / f"{entry_id}.toml").read_text("utf-8")
    except (OSError, ValueError):
        return None
    import tomllib  # (here: most entries have no prose file, and a lookup that finds none never needs the parser)

    try:
        doc = tomllib.loads(text)
    except ValueError:
        return None
    meaning = doc.get("meaning")
    if not isinstance(meaning, str):
        return None
    return Prose(meaning=meaning.strip(), when=str(doc.get("when", "")).strip(),
                 solutions=[str(s) for s in doc.get("solutions", [])], example_fix=str(doc.get("example_fix", "")).strip())
