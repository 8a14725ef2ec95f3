"""The `mltriage` command line.

Exit codes:

- 0: no failure found (``diagnose``), the library is valid (``signatures lint``), every GPU pair OK
  (``probe``), or the command did what was asked;
- 1: a failure was found (``diagnose``), lint found problems, or the probe gave a bad verdict;
- 2: a usage or input error (bad arguments, a missing or empty input, an unknown signature id);
- 3: ``probe`` only: no GPU, no NVIDIA driver or no GPU runtime;
- 4: an internal error, a bug of mltriage (rerun with ``MLTRIAGE_DEBUG=1`` for the traceback);
- 5: ``diagnose`` only: incomplete, no failure found in what could be read but some input could
  not be read (permissions, I/O errors, a symlink loop, a Flight Recorder dump over its limits);
- 130: interrupted (Ctrl-C).

Errors are one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path

from mltriage import __version__

EXIT_HEALTHY, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
EXIT_INTERNAL = 4
EXIT_INCOMPLETE = 5


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors exit 2 with one line, like argparse, but ours
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"mltriage: error: {message}\n")


def _build_parser(with_probe: bool = True, argv: list[str] | None = None) -> argparse.ArgumentParser:
    parser = _Parser(prog="mltriage", description="A local doctor for failed ML training and inference runs.")
    parser.add_argument("--version", action="version", version=f"mltriage {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    diag = sub.add_parser("diagnose", help="diagnose a log file, a directory of rank logs, or stdin")
    diag.add_argument("path", nargs="?", default="-", help="log file, directory of per-rank logs, or - for stdin")
    fmt = diag.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the mltriage.diagnosis/v1 JSON document (indented; on one line past 1,000 findings)")
    fmt.add_argument("--sarif", action="store_true", help="print SARIF 2.1.0 for CI systems")
    diag.add_argument("--probe", action="store_true", help="attach the local GPU P2P probe to P2P-related findings")
    diag.add_argument("--color", choices=("auto", "always", "never"), default="auto")

    explain = sub.add_parser("explain", help="print a signature's full encyclopedia entry as Markdown")
    explain.add_argument("id")

    sigs = sub.add_parser("signatures", help="list, lint or export the signature library")
    sigs_sub = sigs.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    ls = sigs_sub.add_parser("list", help="one line per signature")
    ls.add_argument("--json", action="store_true")
    lint = sigs_sub.add_parser("lint", help="validate every signature file, its samples and the healthy corpus")
    lint.add_argument("root", nargs="?", help="signature folder (default: the installed library)")
    lint.add_argument("--healthy", help="folder of healthy logs that must yield no error-level finding")
    sigs_sub.add_parser("schema", help="print the signature JSON Schema")
    sigs_sub.add_parser("build-cache", help="write the validated library cache that ships beside the signatures")

    catalogue = sub.add_parser("catalogue", help="search the error catalogue: every raise and log site upstream, per release")
    if "catalogue" in (argv or ()):  # its own parser only when asked for: start-up stays small
        from mltriage.catalogue import cli as catalogue_cli

        catalogue_cli.add_arguments(catalogue)

    probe = sub.add_parser("probe", help="probe local GPU peer-to-peer: supported, correct, fast")
    if with_probe:  # importing the probe costs start-up time that `diagnose` should not pay
        from mltriage.probe import cli as probe_cli

        probe_cli.add_arguments(probe)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _build_parser(with_probe="probe" in argv or "-h" in argv or "--help" in argv, argv=argv)
    args = parser.parse_args(argv)
    try:
        if args.command == "diagnose":
            return _diagnose(args)
        if args.command == "explain":
            return _explain(args)
        if args.command == "signatures":
            return _signatures(args)
        if args.command == "catalogue":
            from mltriage.catalogue import cli as catalogue_cli

            return catalogue_cli.run(args)
        if args.command == "probe":
            from mltriage.probe import cli as probe_cli

            return probe_cli.run(args)
        parser.print_usage(sys.stderr)
        print("mltriage: error: a command is required: diagnose, explain, catalogue, signatures or probe (mltriage -h for help)", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug of ours: one clear line, the traceback only on request
        if os.environ.get("MLTRIAGE_DEBUG"):
            raise
        print(f"mltriage: internal error: {type(exc).__name__}: {exc} (rerun with MLTRIAGE_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


def _error(message: str) -> int:
    print(f"mltriage: error: {message}", file=sys.stderr)
    return EXIT_USAGE


# json's C encoder runs only for json.dumps without indent (json.dump to a stream is always the
# pure-Python one): 5 s for 56 MB of findings against 0.3 s. Past this many records nobody reads
# the JSON by eye, so it is written compact, in one piece.
INDENTED_JSON_MAX_RECORDS = 1_000  # findings, ranks and launcher entries together


def _records(diagnosis) -> int:
    """How many records the JSON of a diagnosis holds: 2 findings may stand for 40,000 ranks."""
    return len(diagnosis.findings) + len(diagnosis.ranks) + len(diagnosis.launcher)


def _write_json(document: dict, records: int) -> None:
    indent = 2 if records <= INDENTED_JSON_MAX_RECORDS else None
    sys.stdout.write(json.dumps(document, indent=indent))
    sys.stdout.write("\n")


def _diagnose(args: argparse.Namespace) -> int:
    from mltriage.engine import diagnose_path, diagnose_stream
    from mltriage.engine.reader import InputError

    # One diagnosis, then the process exits: the cyclic garbage collector would only walk the
    # growing heap of findings and ranks again and again (0.2 s of 2 s on 100,000 ranks' lines);
    # what the diagnosis drops is freed by reference counting, and its bounds cap what it keeps.
    gc.disable()
    try:
        if args.path == "-":
            if sys.stdin is None or sys.stdin.isatty():
                return _error("no input: give a log file or directory, or pipe a log into 'mltriage diagnose -'")
            diagnosis = diagnose_stream(sys.stdin.buffer, source="<stdin>")
        else:
            diagnosis = diagnose_path(args.path)
    except InputError as exc:
        return _error(str(exc))
    except FileNotFoundError as exc:
        return _error(str(exc))
    if diagnosis.bytes_read == 0 and not diagnosis.flight_recorder and not diagnosis.unread:
        return _error("the input is empty: nothing to diagnose")
    if args.probe:
        from mltriage.engine.attach import attach_probe

        attach_probe(diagnosis)
    if args.json:
        _write_json(diagnosis.to_json(), _records(diagnosis))
    elif args.sarif:
        from mltriage.render import render_sarif

        _write_json(render_sarif(diagnosis), _records(diagnosis))
    else:
        from mltriage.render import render_text

        color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        sys.stdout.write(render_text(diagnosis, color=color))
    return {"failure": EXIT_FAILURE, "incomplete": EXIT_INCOMPLETE}.get(diagnosis.status, EXIT_HEALTHY)


def _explain(args: argparse.Namespace) -> int:
    import difflib

    from mltriage.explain import render_entry_markdown
    from mltriage.library import load_library

    library = load_library()
    try:
        sys.stdout.write(render_entry_markdown(args.id, library=library))
    except KeyError:
        close = difflib.get_close_matches(args.id, list(library.rules), n=3, cutoff=0.5)
        hint = f" (did you mean: {', '.join(close)}?)" if close else " (see 'mltriage signatures list')"
        return _error(f"unknown signature id {args.id!r}{hint}")
    return EXIT_HEALTHY


def _signatures(args: argparse.Namespace) -> int:
    from mltriage.library import load_library, signatures_dir

    if args.action == "schema":
        from mltriage.schema import json_schema

        json.dump(json_schema(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_HEALTHY
    if args.action == "build-cache":
        from mltriage.library import build_shipped_cache

        try:
            print(build_shipped_cache())
        except (ValueError, OSError) as exc:
            return _error(str(exc))
        return EXIT_HEALTHY
    if args.action == "list":
        library = load_library()
        rules = sorted(library.rules.values(), key=lambda r: (r.area, r.id))
        if args.json:
            json.dump(
                [{"id": r.id, "title": r.title, "area": r.area, "category": r.category, "severity": r.severity, "role": r.role} for r in rules],
                sys.stdout,
                indent=2,
            )
            sys.stdout.write("\n")
        else:
            for r in rules:
                print(f"{r.id:<48} {r.area:<18} {r.severity:<9} {r.role:<11} {r.title}")
            print(f"{len(rules)} signatures", file=sys.stderr)
        for problem in library.problems:
            print(f"invalid: {problem}", file=sys.stderr)
        return EXIT_HEALTHY
    from mltriage.lint import lint

    root = Path(args.root) if args.root else signatures_dir()
    if not root.is_dir():
        return _error(f"no signature folder at {root}")
    healthy = Path(args.healthy) if args.healthy else None
    report = lint(root, healthy)
    for problem in report.errors:
        print(problem)
    status = "ok" if report.ok else f"{len(report.errors)} problem(s)"
    print(f"lint: {report.checked} signatures, {report.samples} samples checked in {report.seconds:.1f}s: {status}", file=sys.stderr)
    return EXIT_HEALTHY if report.ok else EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
