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
