"""The diagnosis engine's front door: text, a file, a directory of rank logs, or a stream in;
a ``Diagnosis`` out."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from mltriage.engine.attach import TopologyHeads, attach_pasted_topology
from mltriage.engine.errorfile import BadErrorFile, read_error_file
from mltriage.engine.findings import build_findings, order_findings
from mltriage.engine.interpret import interpret
from mltriage.library import Library, load_library
from mltriage.masking import mask_diagnosis
from mltriage.model import Diagnosis
from mltriage.engine.reader import (
    InputError,
    LogStream,
    Skipped,
    Source,
    collect_sources,
    iter_blocks,
    open_log,
    open_stream,
    os_error_reason,
    source_for_path,
)
from mltriage.engine.run_reasoning import corroborate_p2p, derive_findings, name_the_command, settle_findings
from mltriage.causes import raise_causes
from mltriage.run_model import build_run_model
from mltriage.run_model.build import installed_versions
from mltriage.engine.prefilter_budget import FLOOD_LANDINGS
from mltriage.engine.scanner import Scanner
from mltriage.engine.triage import triage

if TYPE_CHECKING:
    from mltriage.engine.flight_recorder import RankTrace


def diagnose_text(text: str, source: str = "<text>", library: Library | None = None, first_line: int = 1) -> Diagnosis:
    """Text in memory (an editor document, a selection). An absolute ``source`` path names the rank and
    host the way a per-rank log directory does (``rank3.log``, ``attempt_0/3/stderr.log``).
    ``first_line``: the line number of the text's first line (a selection starting inside a document),
    so every line number the diagnosis cites is one of the document."""
    data = text.encode("utf-8", "surrogatepass")
    origin = source_for_path(Path(source), source) if source.startswith("/") else Source(name=source)
    return diagnose_streams([(origin, io.BytesIO(data))], library=library, first_line=first_line)


def diagnose_bytes(data: bytes, source: str = "<bytes>", library: Library | None = None) -> Diagnosis:
    """Bytes in memory, read like a pipe: ``InputError`` for what is no log (compressed, binary)."""
    return diagnose_stream(io.BytesIO(data), source=source, library=library)


def diagnose_stream(stream: BinaryIO, source: str = "<stdin>", library: Library | None = None) -> Diagnosis:
    """A pipe or any binary stream: classified like a file (UTF-16 and gzip are read, random bytes
    raise ``InputError`` saying what they are)."""
    return diagnose_streams([(Source(name=source), open_stream(stream, source))], library=library)


def diagnose_path(path: str | Path, library: Library | None = None) -> Diagnosis:
    """A log file or a directory of per-rank/per-node logs. Raises ``InputError`` on bad input.
    Inputs inside a directory that could not be read are listed in ``unread`` (the diagnosis is
    then incomplete); those that are no logs in ``skipped``."""
    sources, skipped, dumps = collect_sources(Path(path))
    traces, dump_skipped = _read_flight_recorder(dumps)
    skipped += dump_skipped
    if not sources and not traces and not any(s.unread for s in skipped):
        # no log at all (a dump that is none, an empty directory): an input error. An input that
        # could not be read (a dump of a wrong shape) makes the diagnosis incomplete instead (exit 5)
        raise InputError(f"{dump_skipped[0].name}: {dump_skipped[0].reason}" if dump_skipped else f"nothing to diagnose in {path}")

    def opened():
        for source in sources:
            try:
                if source.path.suffix == ".json" and source.compression is None:
                    converted = read_error_file(source.path)  # a torchrun error file, or None: text
                    if converted is not None:
                        yield source, LogStream(io.BytesIO(converted))
                        continue
                stream = open_log(source)
            except BadErrorFile as exc:
                skipped.append(Skipped(source.name, f"a torchrun error file that cannot be read: {exc}", unread=True))
                continue
            except OSError as exc:
                skipped.append(Skipped(source.name, os_error_reason(source.path, exc), unread=True))
                continue
            with stream:
                yield source, stream

    # every input unread (an error file of a wrong shape given alone) is still a diagnosis: incomplete,
    # each input listed as NOT READ (exit 5), as inside a directory
    return diagnose_streams(opened(), library=library, flight_recorder=traces, skipped=skipped)


def _read_flight_recorder(dumps: list[Source]) -> tuple[list[RankTrace], list[Skipped]]:
    """The dumps' per-rank summaries, and those skipped: ``unread`` when a dump could be real but was
    over a budget, corrupt or of a wrong shape, not when it is no Flight Recorder dump at all."""
    traces: list[RankTrace] = []
    skipped: list[Skipped] = []
    if not dumps:
        return traces, skipped
    # (here: only an input with a dump needs the dump reader)
    from mltriage.engine.flight_recorder import FlightRecorderError, UnreadableDump, rank_of, read_dump, summarize

    for source in dumps:
        try:
            doc = read_dump(source.path)
            rank = rank_of(source.path, doc)
            if rank is None:
                rank = source.rank
            if rank is None:
                skipped.append(Skipped(source.name, "Flight Recorder dump without a rank in its name or content"))
                continue
            traces.append(summarize(doc, rank, source.name))
        except UnreadableDump as exc:
            skipped.append(Skipped(source.name, str(exc), unread=True))
        except FlightRecorderError as exc:
            skipped.append(Skipped(source.name, str(exc)))
        except OSError as exc:
            skipped.append(Skipped(source.name, os_error_reason(source.name, exc), unread=True))
    return traces, skipped


def diagnose_streams(
    streams, library: Library | None = None, flight_recorder: list[RankTrace] | None = None, first_line: int = 1,
    skipped: list[Skipped] | None = None,
) -> Diagnosis:
    """The diagnosis of ``streams``; ``skipped``: inputs passed over (the list may grow while the
    streams are read), listed in the diagnosis before it is masked, like everything else in it."""
    library = library or load_library()
    scanner = Scanner(library)
    names: list[str] = []
    heads = TopologyHeads()
    unread: list[dict[str, str]] = []
    read_notes: list[str] = []
    for source, fh in streams:
        names.append(source.name)
        scanner.begin(source, first_line)
        stream = fh if isinstance(fh, LogStream) else LogStream(fh)  # decoded region by region, NULs dropped
        try:
            for i, block in enumerate(iter_blocks(stream)):
                if i == 0:
                    heads.offer(block)
                scanner.feed(block)
        except OSError as exc:  # an I/O error part-way: what was read counts, the input is incomplete
            unread.append({"name": source.name, "reason": os_error_reason(source.name, exc) + " (part-way through)"})
        unread += [{"name": source.name, "reason": reason} for reason in stream.unread()]
        read_notes += [f"{source.name} {note}" for note in stream.warnings()]
        scanner.end()
    findings = build_findings(scanner.store)
    catalogued, releases, catalogue_stopped = [], {}, False
    lines = scanner.catalogue_lines
    if findings or lines.errors or lines.others:
        # (imported here: a log with nothing to look up never loads the catalogue's modules)
        from mltriage.engine.catalogued import consult_catalogue

        installed = {key: version for key, (_, version, _) in installed_versions(scanner.observations).items()}
        catalogued, releases, catalogue_stopped = consult_catalogue(findings, lines, installed=installed)
    findings += catalogued
    settle_findings(findings, scanner.run, scanner.observations)
    run_model = build_run_model(scanner.observations, scanner.run, findings, scanner.ranks_seen, heads.texts)
    corroborate_p2p(findings, run_model)
    causes = raise_causes(findings, scanner.observations, run_model, library)
    findings += causes
    if not causes:
        findings += derive_findings(findings, scanner.run, run_model, library)
    findings = order_findings(findings, names)
    interpret(findings)
    name_the_command(findings, scanner.run)
    diagnosis = Diagnosis(findings=findings, sources=names, unread=unread, releases=releases, run=run_model.to_json())
    diagnosis.lines_read = scanner.lines_read
    diagnosis.bytes_read = scanner.bytes_read
    diagnosis.warnings += read_notes
    store, matcher = scanner.store, scanner.matcher
    if store.past_limit_ranks:
        diagnosis.warnings.append(f"{store.past_limit_ranks:,} ranks reported an error of a signature past the engine's "
                                  "limits on kept details: those ranks are in the answer, their errors' details are not")
    if store.dropped_hits:
        diagnosis.warnings.append(f"{store.dropped_hits} further matches were only counted (hit limit reached)")
    for phrase, (where, line) in scanner.budget.flooded.items():
        diagnosis.warnings.append(f"{FLOOD_LANDINGS:,} lines in a row held {phrase!r} and fired nothing (the last at "
                                  f"{where}:{line}): later lines holding only that phrase were not examined")
    if catalogue_stopped:
        diagnosis.warnings.append("the error catalogue's lookup budget ran out: some error/warning lines were not looked up")
    if matcher.budget_spent_at is not None:
        where, line = matcher.budget_spent_at
        diagnosis.warnings.append(f"the regex work budget (characters searched) was spent at {where}:{line}: {matcher.trigger_only_lines} later "
                                  "matching lines were matched on their trigger phrases only (no facts captured)")
    if library.not_run:
        diagnosis.warnings.append(f"{len(library.not_run)} signature regex(es) not run for a super-linear shape (their "
                                  "signatures match on their other patterns and trigger phrases): run 'mltriage signatures lint'")
    if library.problems:
        diagnosis.warnings.append(f"{len(library.problems)} signature file(s) skipped as invalid: run 'mltriage signatures lint'")
    attach_pasted_topology(diagnosis, heads.texts)
    triage(diagnosis, [entry for _, entry in scanner.torchrun.worker_failures], scanner.ranks_seen, flight_recorder or [])
    for s in skipped or ():
        (diagnosis.unread if s.unread else diagnosis.skipped).append({"name": s.name, "reason": s.reason})
    mask_diagnosis(diagnosis)  # the one place: every output form (text, JSON, SARIF, the editor) is made from it
    return diagnosis
