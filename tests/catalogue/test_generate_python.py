"""The generator on a small pinned fixture of upstream-like Python source (two releases)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import regex

from mltriage.catalogue.generate.build import ProjectInput, sites_of_files, write
from mltriage.catalogue.generate.python_sites import extract_python
from mltriage.catalogue.generate.sources import Release
from mltriage.catalogue.store import Catalogue
from mltriage.catalogue.match import describe_releases, match_line

FIXTURE = Path(__file__).parent / "fixtures" / "pyproj"


def _files(release: Release):
    root = FIXTURE / release.ref
    for path in sorted(root.rglob("*.py")):
        yield path.relative_to(root).as_posix(), path.read_text()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Catalogue:
    out = tmp_path_factory.mktemp("catalogue")
    releases = [Release("1.0", "r1", "a" * 40, "2024-01-01"), Release("2.0", "r2", "b" * 40, "2025-01-01")]
    project = ProjectInput("vllm", "example/pyproj", "fixture", releases, sites_of_files(_files))
    write([project], out, log=lambda s: None)
    return Catalogue(out)


def _by_format(catalogue: Catalogue, start: str):
    found = [e for e in catalogue.all_entries() if e.format.startswith(start)]
    assert len(found) == 1, [e.format for e in catalogue.all_entries()]
    return found[0]


def test_sites_of_one_file():
    sites = extract_python("pkg/comm.py", (FIXTURE / "r2/pkg/comm.py").read_text())
    by_kind = {s.kind: s for s in sites}
    p2p = by_kind["RuntimeError"]
    assert p2p.format.text == ("Error happened when batch testing peer-to-peer access from {batch_src} to {batch_tgt}:\n"
                               "{returned_stderr_decode}")
    assert (p2p.line, p2p.end_line, p2p.function, p2p.cause) == (13, 17, "Communicator.p2p_check", "OSError")
    assert by_kind["ValueError"].format.text == "world size must be at least 1, got {world_size}"
    assert by_kind["UserWarning"].format.text == "rank {rank} uses the slow path; expect {world_size}x lower bandwidth"
    assert [p.type for p in by_kind["UserWarning"].format.parts if not isinstance(p, str)] == ["str", "int"]
    assert by_kind["AssertionError"].format.text == "rank {rank} out of range for world size {world_size}"
    assert by_kind["info"].format.text == "Cache file written to /tmp/x"


def test_message_assigned_before_the_raise_and_percent_formatting():
    sites = extract_python("pkg/comm.py", (FIXTURE / "r1/pkg/comm.py").read_text())
    value_error = next(s for s in sites if s.kind == "ValueError")
    assert value_error.format.text == "world_size must be positive, got {world_size} (rank {rank})"
    warning = next(s for s in sites if s.kind == "warning")
    # constant arguments are text every output shows
    assert warning.format.text == "Custom allreduce is disabled because no P2P. To silence this warning, pass --flag."


def test_entries_carry_sites_per_release_and_release_ranges(built):
    p2p = _by_format(built, "Error happened when batch testing")
    assert p2p.kind == "RuntimeError" and p2p.cause == "OSError"
    assert [(s.first, s.last, s.path, s.line, s.function) for s in p2p.sites] == [
        (0, 0, "pkg/comm.py", 12, "p2p_check"), (1, 1, "pkg/comm.py", 13, "Communicator.p2p_check")]
    assert describe_releases(built, "vllm", p2p.release_indices()) == "vLLM 1.0–2.0 (or older: the catalogue starts at vLLM 1.0)"
    reworded = _by_format(built, "world size must be at least 1")
    assert describe_releases(built, "vllm", reworded.release_indices()) == "vLLM 2.0"
    old = _by_format(built, "world_size must be positive")
    assert old.release_indices() == {0}
    assert built.link(p2p, p2p.sites[-1]) == "https://github.com/example/pyproj/blob/" + "b" * 40 + "/pkg/comm.py#L13-L17"


def test_ids_are_stable_across_regenerations(built, tmp_path):
    releases = [Release("2.0", "r2", None, None)]
    write([ProjectInput("vllm", "example/pyproj", "fixture", releases, sites_of_files(_files))], tmp_path, log=lambda s: None)
    again = {e.format: e.id for e in Catalogue(tmp_path).all_entries()}
    first = {e.format: e.id for e in built.all_entries()}
    assert again and all(first[f] == i for f, i in again.items())


def test_rendered_messages_match_their_matchers_with_values_captured(built):
    p2p = _by_format(built, "Error happened when batch testing")
    for src, tgt in (("[0, 0, 1, 1]", "[0, 1, 0, 1]"), ("(0, 0, 1, 1)", "(0, 1, 0, 1)")):
        line = f"RuntimeError: Error happened when batch testing peer-to-peer access from {src} to {tgt}:"
        (match,) = match_line(line, built)
        assert match.entry.id == p2p.id
        assert (match.facts["batch_src"], match.facts["batch_tgt"]) == (src, tgt)
    warn = _by_format(built, "rank {rank} uses the slow path")
    (match,) = match_line("/x/comm.py:22: UserWarning: rank 3 uses the slow path; expect 8x lower bandwidth", built)
    assert match.entry.id == warn.id and match.facts == {"rank": "3", "world_size": "8"}
    assert match_line("rank 3 uses the slow path; expect many x lower bandwidth", built) == []  # {world_size:d} is a number


def test_a_file_line_hint_narrows_the_releases(built):
    from mltriage.catalogue.match import hints_in
    from mltriage.engine.prefixes import parse_prefixes

    line = "ERROR 12-01 10:00:01 [comm.py:12] Error happened when batch testing peer-to-peer access from [0] to [1]:"
    (match,) = match_line(parse_prefixes(line).message, built, hints_in(line))
    assert match.releases == {0}  # line 12 is release 1.0's site (2.0 raises it at line 13)
    (unhinted,) = match_line(parse_prefixes(line).message, built)
    assert unhinted.releases == {0, 1}


def test_shards_are_compact_json_lines(built):
    folder = built.data / "vllm"  # each project is a folder of its own
    index = json.loads(gzip.open(folder / "index.json.gz", "rt").read())
    assert index["shards"] >= 1 and index["keys"] == sorted(index["keys"])
    rows = 0
    for path in folder.glob("shard-*.jsonl.gz"):
        for row in gzip.open(path, "rt"):
            key, _, text = row.partition("\t")
            doc = json.loads(text)
            rows += 1
            assert key in doc["keys"]
            assert set(doc) == {"id", "project", "kind", "format", "lines", "keys", "cause", "sites"}
            assert all(len(site) == 8 for site in doc["sites"])  # first, last, path, line, end, function, kind, cause
            for pattern in doc["lines"]:
                if pattern:
                    regex.compile(pattern)
    assert rows >= len(list(built.all_entries()))


def test_formats_without_enough_literal_text_are_left_out(tmp_path):
    src = tmp_path / "r" / "m.py"
    src.parent.mkdir()
    src.write_text('def f(x, e):\n    raise RuntimeError(f"{x}: {e}")\n    logger.error("%s", x)\n'
                   '    raise ValueError("invalid device ordinal given to the allocator")\n')
    releases = [Release("1", "r", None, None)]

    def files(release):
        yield "m.py", src.read_text()

    write([ProjectInput("vllm", "x/y", "t", releases, sites_of_files(files))], tmp_path / "out", log=lambda s: None)
    assert [e.format for e in Catalogue(tmp_path / "out").all_entries()] == ["invalid device ordinal given to the allocator"]


def _write_two_forms(tmp_path: Path, out: Path, name: str = "vllm") -> list[Release]:
    """Two releases of one message: the variable renamed and the exception type changed between them."""
    for ref, body in (("a", 'def f(rank):\n    raise RuntimeError(f"rank {rank} lost its peer after the barrier")\n'),
                      ("b", 'class C:\n    def f(self):\n        raise ValueError(f"rank {self.rank} lost its peer after the barrier")\n')):
        (tmp_path / ref).mkdir(parents=True, exist_ok=True)
        (tmp_path / ref / "m.py").write_text(body)

    def files(release):
        yield "m.py", (tmp_path / release.ref / "m.py").read_text()

    releases = [Release("1", "a", "c" * 40, "2024-01-01"), Release("2", "b", "d" * 40, "2024-06-01")]
    write([ProjectInput(name, "x/y", "t", releases, sites_of_files(files))], out, log=lambda s: None)
    return releases


def test_one_entry_per_message_text_with_every_forms_sites(tmp_path):
    _write_two_forms(tmp_path, tmp_path / "out")
    (entry,) = Catalogue(tmp_path / "out").all_entries()
    assert entry.format == "rank {self_rank} lost its peer after the barrier"  # the newest form's names
    assert [(s.first, s.last, s.kind, s.function) for s in entry.sites] == [
        (0, 0, "RuntimeError", "f"), (1, 1, "ValueError", "C.f")]
    assert entry.kind == "ValueError" and entry.kinds == {"RuntimeError", "ValueError"}
    from mltriage.catalogue.generate.build import entry_id

    assert entry.id == entry_id("vllm", "rank {rank} lost its peer after the barrier")  # placeholder names do not count
    (match,) = match_line("RuntimeError: rank 3 lost its peer after the barrier", Catalogue(tmp_path / "out"))
    assert match.site().kind == "RuntimeError" and match.site().first == 0  # the exception type picks its site


def test_regeneration_is_byte_for_byte_and_per_project(tmp_path):
    from mltriage.catalogue.generate.build import builders_from_data, write_project

    out = tmp_path / "out"
    _write_two_forms(tmp_path, out, "vllm")
    releases = _write_two_forms(tmp_path, out, "deepspeed")
    snapshot = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert {p.parts[0] for p in snapshot} == {"vllm", "deepspeed"}
    _write_two_forms(tmp_path, out, "vllm")  # one project regenerated: every byte the same, the other untouched
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == snapshot
    # rebuilt from its own entries (no sources), the project's data is the same bytes again
    builders, figures = builders_from_data("vllm", out, releases)
    project = ProjectInput("vllm", "x/y", "t", releases, lambda r: [])
    write_project(project, builders, figures, tmp_path / "rebuilt")
    rebuilt = tmp_path / "rebuilt" / "vllm"
    assert sorted(p.name for p in rebuilt.iterdir()) == sorted(p.name for p in snapshot if p.parts[0] == "vllm")
    for p in rebuilt.iterdir():
        assert p.read_bytes() == snapshot[Path("vllm") / p.name], p.name


def test_releases_are_ordered_by_date_with_each_line_kept_together():
    from mltriage.catalogue.generate.sources import release_order

    # Megatron-LM's tags (commit dates from its mirror): v1.0, v2.x, 23.04, core_v0.4.0 ... and core_v0.12.3
    # (2025-08-08), a maintenance release of the 0.12 line after 0.13.0 (2025-07-25)
    tags = [("0.4.0", "2023-12-11"), ("1.0", "2020-04-21"), ("0.12.3", "2025-08-08"), ("23.04", "2023-05-11"),
            ("0.13.0", "2025-07-25"), ("2.6", "2021-08-27"), ("0.12.0", "2025-05-06")]
    ordered = [r.name for r in release_order([Release(n, n, None, d) for n, d in tags])]
    assert ordered == ["1.0", "2.6", "23.04", "0.4.0", "0.12.0", "0.12.3", "0.13.0"]


def test_ranges_read_in_release_order(tmp_path):
    out = tmp_path / "out"
    for name, body in (("1.0", 'raise RuntimeError("the pipeline schedule lost a microbatch")\n'),
                       ("0.4.0", 'raise RuntimeError("the pipeline schedule lost a microbatch")\n')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text(body)
    releases = [Release("1.0", "v1.0", None, "2020-04-21"), Release("0.4.0", "core_v0.4.0", None, "2023-12-11")]

    def files(release):
        yield "m.py", (tmp_path / release.name / "m.py").read_text()

    write([ProjectInput("megatron", "x/y", "t", releases, sites_of_files(files))], out, log=lambda s: None)
    built = Catalogue(out)
    (entry,) = built.all_entries()
    assert describe_releases(built, "megatron", entry.release_indices()) == \
        "Megatron-LM 1.0–0.4.0 (or older: the catalogue starts at Megatron-LM 1.0)"


# Dynamo's graph breaks, in the forms of torch v2.0.0 (`unimplemented(msg)`), v2.10.0 (torch/_dynamo/
# symbolic_convert.py generic_jump: the explanation bound in the function around the closure that breaks)
# and v2.15.0 (torch/_dynamo/variables/builtin.py: keywords, an f-string explanation over two literals)
GRAPH_BREAKS = '''
def generic_jump(truth_fn, push):
    _explanation = (
        "Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). "
        "Dynamo does not support tracing dynamic control flow."
    )

    def inner(self, inst):
        unimplemented(
            gb_type="Data-dependent branching",
            context=f"attempted to jump with {value}",
            explanation=_explanation,
            hints=[*graph_break_hints.FUNDAMENTAL],
        )

def call_unimplemented(args):
    try:
        pass
    except AsPythonConstantNotImplementedError as exc:
        unimplemented(
            gb_type="Failed to trace builtin operator",
            context=f"builtin {fn.__name__} {arg_types} {has_kwargs}",
            explanation=f"Dynamo does not know how to trace builtin operator `{fn.__name__}` "
            f"with argument types {real_arg_types} (has_kwargs {has_kwargs})",
            hints=[],
            from_exc=exc,
        )

def call_function(self, tx, args, kwargs):
    unimplemented(f"call_function {self} {args} {kwargs}")
'''


def test_dynamo_graph_breaks_are_unsupported_sites_with_their_explanation():
    sites = extract_python("torch/_dynamo/symbolic_convert.py", GRAPH_BREAKS)
    assert [(s.kind, s.function, s.format.text) for s in sites] == [
        ("Unsupported", "generic_jump.inner", "Data-dependent branching\n  Explanation: Detected data-dependent "
         "branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow."),
        ("Unsupported", "call_unimplemented", "Failed to trace builtin operator\n  Explanation: Dynamo does not "
         "know how to trace builtin operator `{fn___name}` with argument types {real_arg_types} (has_kwargs "
         "{has_kwargs})"),
        ("Unsupported", "call_function", "call_function {self} {args} {kwargs}"),
    ]
    assert sites[1].cause == "AsPythonConstantNotImplementedError"  # from_exc= is the chained cause
    # the same helper's name in another project is not Dynamo's
    assert extract_python("vllm/worker.py", GRAPH_BREAKS) == []


def test_an_op_builders_own_warning_method_is_a_warning_site_in_op_builder_only():
    # in the style of DeepSpeed's op_builder/async_io.py, whose OpBuilder.warning(msg) prints "[WARNING] {msg}"
    source = ('class AsyncIOBuilder(OpBuilder):\n'
              '    def is_compatible(self, verbose=False):\n'
              '        if verbose and not self.has_function("io_submit", ("aio", )):\n'
              '            self.warning(f"{self.NAME} requires the dev libaio .so object and headers but these were not found.")\n')
    sites = extract_python("op_builder/async_io.py", source)
    assert [(s.line, s.kind, s.function, s.format.text) for s in sites] == [
        (4, "warning", "AsyncIOBuilder.is_compatible",
         "{self_NAME} requires the dev libaio .so object and headers but these were not found.")]
    assert extract_python("deepspeed/runtime/engine.py", source) == []  # another class's warning() is no such print
