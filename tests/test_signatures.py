"""Every signature against its own samples, and the whole library against real healthy logs."""

import re
from pathlib import Path

import pytest

from mltriage.library import Library, Rule, signature_files, signatures_dir, validate_file
from mltriage.lint import _check_backtracking, _check_samples, _check_weak, check_healthy_corpus, lint

ROOT = Path(__file__).resolve().parent.parent
FILES = signature_files(signatures_dir())


@pytest.fixture(scope="module")
def library() -> Library:
    sigs = [(p, validate_file(p)) for p in FILES]
    return Library(rules={s.id: Rule.from_signature(s, p) for p, s in sigs}, root=signatures_dir())


def test_library_is_large_and_lint_clean():
    report = lint(signatures_dir())
    assert report.errors == []
    assert report.checked == len(FILES) >= 80
    areas = {p.parent.name for p in FILES}
    assert areas >= {"nccl", "cuda", "torch-distributed", "torchrun", "dataloader", "numerics", "vllm", "deepspeed",
                     "megatron", "huggingface", "fsdp", "tensorrt-llm", "host"}


def test_required_entries_exist():
    ids = {p.stem for p in FILES}
    # the issue names these two explicitly
    assert any("p2p" in i and ("nan" in i or "corrupt" in i) for i in ids), "KV-cache NaN / P2P corruption entry"
    assert "vllm-p2p-access-test-crashed" in ids
    text = (signatures_dir() / "vllm" / "vllm-p2p-access-test-crashed.toml").read_text()
    assert "Error happened when batch testing peer-to-peer access" in text


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_signature_samples(path, library):
    sig = validate_file(path)
    rule = library.rules[sig.id]
    problems = _check_weak(rule) + _check_backtracking(rule, [s.text for s in sig.samples.positive])
    problems += _check_samples(rule, sig, library)
    assert problems == []
    # provenance: every sample says where it came from, and a cited repository file exists
    for sample in [*sig.samples.positive, *sig.samples.negative]:
        text = sample.source.lower()
        cited = re.findall(r"\b((?:corpus|zoo|tests)/[\w./-]+\w)", sample.source)
        assert cited or any(w in text for w in ("reproduced", "recorded", "format string", "built from", "upstream")), sample.source
        for rel in cited:
            assert (ROOT / rel).exists(), f"{path.name}: sample cites {rel}, which is not in the repository"
        missing = _not_in_cited_output(sample.text, sample.source, cited)
        assert not missing, f"{path.name}: sample lines not found in the output it cites ({', '.join(cited)}): {missing[:3]}"


# A cited reproducer (a script, a command file) made the output; a cited recorded output holds it.
_REPRODUCER_SUFFIXES = (".py", ".cpp", ".cu", ".c", ".sh", ".cmd")


def _not_in_cited_output(text: str, source: str, cited: list[str]) -> list[str]:
    """The sample's non-empty lines (stripped) that none of the recorded outputs it cites contains.
    Samples "built from" a format string are composed, so their citations are only ingredients."""
    if source.lower().startswith("built from"):
        return []
    outputs = []
    for rel in cited:
        target = ROOT / rel
        files = [target] if target.is_file() else sorted(p for p in target.rglob("*") if p.is_file())
        outputs += [f.read_text(encoding="utf-8", errors="replace") for f in files if f.suffix not in _REPRODUCER_SUFFIXES]
    if not outputs:
        return []
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return [line for line in lines if not any(line in output for output in outputs)]


def test_provenance_check_catches_a_wrong_citation():
    line = "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 10000ms for send operation to complete"
    assert _not_in_cited_output(line, "real output: zoo/cpu/rank_hang/console.log", ["zoo/cpu/rank_hang/console.log"]) == []
    wrong = ["zoo/cpu/skipped_collective/console.log"]
    assert _not_in_cited_output(f"  {line}\n", "real output: " + wrong[0], wrong) == [line]


def test_healthy_corpus_has_no_error_level_findings(library):
    corpus = ROOT / "corpus" / "healthy"
    assert corpus.is_dir(), "the healthy-log corpus is part of the repository"
    files = [p for p in corpus.rglob("*") if p.is_file()]
    assert len(files) >= 2
    assert check_healthy_corpus(library, corpus) == []


def test_committed_json_schema_is_current():
    import json

    from mltriage.schema import json_schema

    committed = json.loads((signatures_dir() / "signature.schema.json").read_text())
    assert committed == json_schema(), "run: mltriage signatures schema > signatures/signature.schema.json"


def test_shipped_library_cache_is_current():
    """First start skips pydantic validation only while the shipped cache matches the files."""
    from mltriage.library import SHIPPED_CACHE, _fingerprint, _read_cache

    root = signatures_dir()
    cached = _read_cache(root / SHIPPED_CACHE, root, _fingerprint(root, FILES))
    assert cached is not None, "run: mltriage signatures build-cache"
    assert set(cached.rules) == {p.stem for p in FILES}
