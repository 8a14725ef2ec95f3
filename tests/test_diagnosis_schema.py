"""The diagnosis' JSON Schema and the extension's TypeScript types are generated from the one model:
the committed files are current, real diagnoses of real logs validate, and the prose contract names
every field the model exports."""

import json
import re
from pathlib import Path

import pytest

from cli_runner import ROOT, run_cli
from mltriage import diagnosis_schema
from mltriage.diagnosis_schema import json_schema, problems

REAL_LOGS = [ROOT / "corpus" / "gpu", ROOT / "corpus" / "cpu", *sorted((ROOT / "examples").glob("*.log"))[:6]]


def test_committed_schema_and_typescript_are_current():
    assert diagnosis_schema.main([]) == 0, "run: python -m mltriage.diagnosis_schema --write"


@pytest.fixture(scope="module")
def real_documents() -> list[dict]:
    docs = []
    for path in REAL_LOGS:
        r = run_cli("diagnose", str(path), "--json")
        assert r.returncode in (0, 1, 5), r.stderr
        docs.append(json.loads(r.stdout))
    return docs


def test_real_diagnoses_validate(real_documents):
    schema = json_schema()
    assert sum(len(d["findings"]) for d in real_documents) > 20  # the check saw findings, ranks and timelines
    assert any(d["ranks"] for d in real_documents) and any(d["timeline"] for d in real_documents)
    for doc in real_documents:
        assert problems(doc, schema) == [], doc["inputs"]["sources"][:1]


def test_every_record_exports_exactly_its_schema_fields(real_documents):
    defs = json_schema()["$defs"]
    finding = real_documents[0]["findings"][0]
    assert set(finding) == set(defs["Finding"]["properties"])
    assert set(finding["fix"]) == set(defs["Fix"]["properties"])
    rank = next(r for d in real_documents for r in d["ranks"])
    assert set(rank) == set(defs["RankRole"]["properties"])
    entry = next(t for d in real_documents for t in d["timeline"])
    assert set(entry) == set(defs["TimelineEntry"]["properties"])


def test_the_validator_finds_departures(real_documents):
    doc = json.loads(json.dumps(real_documents[0]))
    finding = doc["findings"][0]
    finding["severity"] = "fatal"  # no such severity
    finding["rank"] = "3"  # a rank is an int
    del finding["verify"]
    doc["surprise"] = 1
    found = problems(doc)
    assert any("severity" in p and "fatal" in p for p in found)
    assert any(".rank" in p and "matches none" in p for p in found)
    assert any("verify is missing" in p for p in found)
    assert any("surprise is not in the schema" in p for p in found)


def test_the_written_contract_names_every_exported_field():
    schema = json_schema()
    text = (ROOT / "docs" / "diagnosis-schema.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z0-9_]+)`", text))
    missing = [key for key in schema["properties"] if key not in named]
    missing += [key for key in schema["$defs"]["Finding"]["properties"] if key not in named]
    assert missing == [], f"docs/diagnosis-schema.md does not describe {missing}"


def test_typescript_types_the_enums_as_the_model_does():
    ts = (ROOT / "extension" / "src" / "generated" / "diagnosis.ts").read_text(encoding="utf-8")
    assert 'role: "root-cause" | "collateral" | "context";' in ts
    assert 'reported_by: "worker" | "launcher";' in ts
    assert 'clock: "wall" | "time" | null;' in ts
    assert "import { Diagnosis } from './generated/diagnosis';" in (ROOT / "extension" / "src" / "diagnosis.ts").read_text()
