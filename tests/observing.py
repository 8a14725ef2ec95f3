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


def assert_typed_facts(symptom, line: str, source: str, facts: dict, *, once: bool = False) -> None:
    """``line`` is observed as ``symptom`` with each of ``facts``, of its type (an int is an int)."""
    got = facts_observed(symptom, line, source, once=once)
    for name, value in facts.items():
        assert got.get(name) == value and type(got[name]) is type(value), (name, got)


def assert_two_sources(words) -> None:
    """Every symptom of a WORDS table is tested in forms from two independent sources at least."""
    for symptom, sources in sources_by_symptom(words).items():
        assert len(sources) >= 2, f"{symptom.value} is tested with one source only: {sources}"
