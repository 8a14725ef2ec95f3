"""Signatures on one line: which of them the line's trigger phrases name, what their patterns make
of it, and the hit each that fires hands to the hit store.

What a signature makes of a message (it matched, it is a supporting line, only its phrase is there,
nothing) is decided once per message for messages short enough that their searches are not counted:
ranks print the same message again and again.

Bounded regex work, counted, never timed (output is a function of the input: the same log gives
the same findings on a busy machine as on an idle one). A search costs at most a constant times the
characters it reads: no pattern that can run has a super-linear shape (``library.validate_file``
refuses one, via ``mltriage.regex_shape``), and the scanner hands over at most 16 KiB of a line.
The characters that the searches of long messages read are counted, and all of them in one
diagnosis share a budget that grows with the input: once it is spent, signatures fire on their
trigger phrase alone (trigger-only findings, no facts) for the rest of the input, and the
diagnosis says so.
"""

from __future__ import annotations

from mltriage.engine.hit_store import HitStore, Matched, facts_of
from mltriage.engine.prefixes import LineContext
from mltriage.engine.rank_groups import shared_facts
from mltriage.engine.tracebacks import StreamKey
from mltriage.library import Library, Rule

# Characters read by the searches of long messages, per diagnosis: a base and a share per byte of
# input. The searches read 0.5-1 G characters per CPU-second here, so this is the 0.25 s + 10 ms per
# MB that the time budget it replaces allowed on an idle machine; a 16 KiB line of every trigger
# phrase reads ~1.4 M characters, so 180 such lines spend the base.
REGEX_BUDGET_CHARS = 250_000_000
REGEX_BUDGET_CHARS_PER_BYTE = 10
COUNTED_MESSAGE = 512  # shorter messages are decided once (remembered) and cost little: longer ones are counted

_MATCHED, _SUPPORTS, _PHRASE_ONLY = "matched", "supports", "phrase-only"  # what a signature makes of a message
_NOTHING = ("nothing",)
MAX_OUTCOMES = 8_192  # (signature, trigger, message) outcomes remembered per diagnosis


class Matcher:
    """Runs the signatures a line's trigger phrases name; ``input_bytes`` (the line loop's count of
    what it has read) sizes the regex budget."""

    def __init__(self, library: Library, store: HitStore) -> None:
        self.library = library
        self.store = store
        self._triggers = list(library.trigger_index)
        self._outcomes: dict[tuple[str, str, str], tuple] = {}  # (signature, trigger, message) -> outcome
        self._candidates: dict[frozenset[str], tuple[str, ...]] = {}  # a line's literals -> its triggers, sorted
        self.input_bytes = 0
        self.regex_chars = 0  # characters read by the searches of messages longer than COUNTED_MESSAGE
        self.budget_spent_at: tuple[str, int] | None = None  # (source, line) where the regex budget ran out
        self.trigger_only_lines = 0  # lines matched on trigger phrases alone once the budget was spent

    def match(self, text: str, ctx: LineContext, stream: StreamKey, line_no: int, present: frozenset[str] | None,
              windowed: bool, requires_only: bool = False, structural: bool = False) -> None:
        """Match the signatures whose triggers are in ``present`` (None: try every trigger);
        ``windowed``: ``text`` is a window of a longer line, which may lack a phrase the pre-filter saw;
        ``requires_only``: the line can only support another line's hit (a traceback's frame);
        ``structural``: it opens or closes a traceback (its header or exception line), which triage
        needs even once the regex budget is spent."""
        message = ctx.message
        index = self.library.trigger_index
        seen: set[str] = set()
        if present is None:
            candidates = self._triggers
        else:
            candidates = self._candidates.get(present)
            if candidates is None:
                # in one order whatever the hash seed: which trigger a rule is tried with, and so its hit, follows it
                candidates = tuple(sorted(t for t in present if t in index))
                if len(self._candidates) < 65_536:
                    self._candidates[present] = candidates
            if not candidates and self.budget_spent_at is None:
                return  # (only symptom or marker phrases: no signature to try)
        counted = len(message) > COUNTED_MESSAGE and self.budget_spent_at is None
        # once the budget is spent, patterns run only on a short line that opens or closes a
        # traceback: a rank's own error report, which triage needs
        patterns = self.budget_spent_at is None or (structural and len(message) <= COUNTED_MESSAGE)
        if not patterns and not requires_only:
            self.trigger_only_lines += 1
        # the pre-filter saw these literals on the line; only a window of a long line may lack one
        check = present is None or windowed
        for trigger in candidates:
            if check and trigger not in text:
                continue
            for rule in index[trigger]:
                if rule.id in seen:
                    continue
                seen.add(rule.id)
                if requires_only:
                    self._note_requires(rule, ctx.message, stream, line_no)
                else:
                    self._match_rule(rule, trigger, text, ctx, stream, line_no, patterns)
        if counted and self.regex_chars > REGEX_BUDGET_CHARS + REGEX_BUDGET_CHARS_PER_BYTE * self.input_bytes:
            self.budget_spent_at = (self.store.source.name, line_no)

    def _search(self, pattern, message: str):
        if len(message) > COUNTED_MESSAGE:
            self.regex_chars += len(message)
        return pattern.search(message)

    def _match_rule(self, rule: Rule, trigger: str, text: str, ctx: LineContext, stream: StreamKey, line_no: int,
                    patterns: bool = True) -> None:
        message = ctx.message
        store = self.store
        if stream[1] is not None and not rule.requires:
            key = store.counts_only(rule, stream[1])
            if key is not None:  # its trigger phrase counts one more, without running the patterns
                store.count(key)
                return
        if not patterns:  # the regex budget is spent: the trigger phrase alone decides
            if trigger in message and rule.fires_alone(trigger) and not rule.require_sources:
                store.record(rule, None, text, ctx, stream, line_no, partial=trigger)
            return
        remembered_as = (rule.id, trigger, message) if len(message) <= COUNTED_MESSAGE else None
        outcome = self._outcomes.get(remembered_as) if remembered_as is not None else None
        if outcome is None:
            outcome = self._outcome(rule, trigger, message)
            if remembered_as is not None and len(self._outcomes) < MAX_OUTCOMES:
                self._outcomes[remembered_as] = outcome
        kind = outcome[0]
        if kind is _MATCHED:
            store.record(rule, outcome[1], text, ctx, stream, line_no)
        elif kind is _SUPPORTS:  # a supporting line of this rule, not a firing one
            store.add_require_evidence(rule, stream, line_no)
        elif kind is _PHRASE_ONLY:
            # the phrase is there but the patterns know another release's wording: still the failure
            store.record(rule, None, text, ctx, stream, line_no, partial=trigger)

    def _outcome(self, rule: Rule, trigger: str, message: str) -> tuple:
        """What ``rule`` makes of ``message`` (no side effects: ``_match_rule`` acts on it)."""
        for pattern in rule.patterns:
            m = self._search(pattern, message)
            if m is None:
                continue
            if any(self._search(x, message) for x in rule.excludes):
                return _NOTHING
            facts = facts_of(m)
            return (_MATCHED, Matched(facts, m.start(), m.end(), shared_facts(facts)))
        if rule.requires and any(self._search(r, message) for r in rule.requires):
            return (_SUPPORTS,)
        if trigger in message and rule.fires_alone(trigger) and not any(self._search(x, message) for x in rule.excludes):
            return (_PHRASE_ONLY,)
        return _NOTHING

    def _note_requires(self, rule: Rule, message: str, stream: StreamKey, line_no: int) -> None:
        if rule.requires and any(self._search(r, message) for r in rule.requires):
            self.store.add_require_evidence(rule, stream, line_no)
