"""What the scan observes in a text: the symptom stage's output, for tests of wordings and causes."""

from mltriage.engine.reader import Source
from mltriage.engine.scanner import Scanner
from mltriage.library import load_library


def observe(text: str):
    """The observations of ``text`` read as one input (a last newline added when missing)."""
    scanner = Scanner(load_library())
    scanner.begin(Source(name="log"))
    scanner.feed((text if text.endswith("\n") else text + "\n").encode())
    scanner.end()
    scanner.observations.finish()
    return scanner.observations


def facts_observed(symptom, line: str, source: str, *, once: bool = False) -> dict:
    """The facts of ``symptom`` observed on ``line`` (failing the test when the wording misses it; ``once``:
    when two wordings said the same on it)."""
    found = observe(line).of(symptom)
    assert found, f"{symptom.value} not observed in {line!r} ({source})"
    if once:
        assert len(found) == 1, found  # one line, one observation: no two wordings say the same
    return found[0].facts


def sources_by_symptom(words) -> dict:
    """The distinct sources each symptom of a WORDS table (symptom, line, source, facts) is tested in."""
    by: dict = {}
    for symptom, _, source, _ in words:
        by.setdefault(symptom, set()).add(source)
    return by
