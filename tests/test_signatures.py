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
