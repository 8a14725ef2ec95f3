"""The JSON Schema of ``mltriage.diagnosis/v1`` and the extension's TypeScript types, both generated
from the one model (``mltriage.model``): each record's JSON fields are its dataclass fields, typed by
their annotations (enums give their values), less the internal ones and plus the few that ``to_json``
derives. ``python -m mltriage.diagnosis_schema --write`` regenerates the committed files;
tests check that they are current and that real diagnoses validate against the schema.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from dataclasses import fields, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from mltriage import model
from mltriage.model import (SCHEMA, CatalogueRef, Diagnosis, Finding, Fix, FlightRecorderSummary, LaunchFlag, RankRole, TimelineEntry,
                            WorkerFailure)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "diagnosis.schema.json"
TYPESCRIPT_FILE = ROOT / "extension" / "src" / "generated" / "diagnosis.ts"

RECORDS = (Finding, Fix, LaunchFlag, CatalogueRef, RankRole, TimelineEntry, FlightRecorderSummary, WorkerFailure)
# fields kept for the engine's own work, never exported
_INTERNAL = {Finding: {"block", "rank_lines", "rank_places", "column_start", "column_end", "proposed_role", "verdict"}}
# what to_json adds: derived from other fields
_DERIVED: dict[type, dict[str, Any]] = {
    Finding: {"role": model.Role, "columns": tuple[int, int]},
    LaunchFlag: {"argument": str},
}
_STATUS = ("failure", "incomplete", "healthy")
_NAMED = {"name": str, "reason": str}  # an input skipped or not read


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(model))


def _json_fields(cls: type) -> dict[str, Any]:
    """JSON field name -> annotation, in the record's order."""
    hints = _hints(cls)
    out = {f.name: hints[f.name] for f in fields(cls) if f.name not in _INTERNAL.get(cls, set())}
    out.update(_DERIVED.get(cls, {}))
    return out


def _schema_of(annotation: Any) -> dict[str, Any]:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return {"type": "null"}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema_of(a) for a in args]}
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return {"enum": [m.value for m in annotation]}
    if is_dataclass(annotation):
        return {"$ref": f"#/$defs/{annotation.__name__}"}
    if origin in (list, tuple) and origin is tuple and args and args[-1] is not Ellipsis:
        return {"type": "array", "prefixItems": [_schema_of(a) for a in args], "minItems": len(args), "maxItems": len(args)}
    if origin in (list, tuple):
        return {"type": "array", "items": _schema_of(args[0]) if args else {}}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema_of(args[1])}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in simple:
        return {"type": simple[annotation]}
    if annotation is Any:
        return {}
    raise TypeError(f"no JSON type for {annotation!r}")


def _object(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {k: _schema_of(v) for k, v in props.items()}, "required": list(props),
            "additionalProperties": False}


def json_schema() -> dict[str, Any]:
    defs = {cls.__name__: _object(_json_fields(cls)) for cls in RECORDS}
    defs["Named"] = _object(_NAMED)
    hints = _hints(Diagnosis)
    top: dict[str, Any] = {
        "schema": {"const": SCHEMA},
        "status": {"enum": list(_STATUS)},
        "complete": {"type": "boolean"},
        **{name: _schema_of(hints[name]) for name in ("initiating_rank", "initiating_host", "explanation", "failure_kind",
                                                       "failure_domain", "findings", "root_cause_index", "releases", "ranks",
                                                       "timeline", "launcher", "flight_recorder", "warnings")},
        "inputs": {"type": "object", "additionalProperties": False, "required": ["sources", "skipped", "unread", "lines", "bytes"],
                   "properties": {"sources": {"type": "array", "items": {"type": "string"}},
                                  "skipped": {"type": "array", "items": {"$ref": "#/$defs/Named"}},
                                  "unread": {"type": "array", "items": {"$ref": "#/$defs/Named"}},
                                  "lines": {"type": "integer"}, "bytes": {"type": "integer"}}},
        # the probe's report, a pasted topology and the run model have schemas of their own (docs/diagnosis-schema.md)
        "probe": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        "topology": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        "run": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA, "title": "mltriage diagnosis",
            "type": "object", "properties": top, "required": list(top), "additionalProperties": False, "$defs": defs}


# -- the extension's types -------------------------------------------------------------------------

def _ts(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(dict.fromkeys(_ts(s) for s in schema["anyOf"]))
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if kind == "array" and "prefixItems" in schema:
        return "[" + ", ".join(_ts(s) for s in schema["prefixItems"]) + "]"
    if kind == "array":
        item = _ts(schema.get("items", {}))
        return f"({item})[]" if "|" in item else f"{item}[]"
    if kind == "object" and "properties" in schema:
        return "{ " + " ".join(f"{k}: {_ts(v)};" for k, v in schema["properties"].items()) + " }"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return f"Record<string, {_ts(extra)}>" if isinstance(extra, dict) else "Record<string, unknown>"
    return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}.get(kind, "unknown")


def typescript() -> str:
    schema = json_schema()
    out = ["// Generated by `python -m mltriage.diagnosis_schema --write` from server/mltriage/model.py: do not edit.",
           f"// The JSON document of `mltriage diagnose --json` ({SCHEMA}).", ""]
    for name, record in {**schema["$defs"], "Diagnosis": schema}.items():
        out.append(f"export interface {name} {{")
        out += [f"  {key}: {_ts(value)};" for key, value in record["properties"].items()]
        out += ["}", ""]
    return "\n".join(out)


# -- checking a document ---------------------------------------------------------------------------

def problems(document: Any, schema: dict[str, Any] | None = None) -> list[str]:
    """Where ``document`` departs from the schema (the subset of JSON Schema generated here)."""
    root = schema or json_schema()
    out: list[str] = []
    _check(document, root, root, "$", out)
    return out


def _check(value: Any, schema: dict[str, Any], root: dict[str, Any], where: str, out: list[str]) -> None:
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in schema:
        trials = [[] for _ in schema["anyOf"]]
        for s, found in zip(schema["anyOf"], trials):
            _check(value, s, root, where, found)
        if all(trials):
            out.append(f"{where}: {value!r:.80} matches none of its types")
        return
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r:.80} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r:.80} is none of {schema['enum']}")
    kind = schema.get("type")
    types_of = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "null": type(None), "array": list, "object": dict}
    if kind is not None and (not isinstance(value, types_of[kind]) or (kind in ("integer", "number") and isinstance(value, bool))):
        out.append(f"{where}: {type(value).__name__} where the schema says {kind}")
        return
    if kind == "object":
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{where}: {key} is missing")
        for key, item in value.items():
            if key in props:
                _check(item, props[key], root, f"{where}.{key}", out)
            elif isinstance(schema.get("additionalProperties"), dict):
                _check(item, schema["additionalProperties"], root, f"{where}.{key}", out)
            elif schema.get("additionalProperties") is False:
                out.append(f"{where}: {key} is not in the schema")
    if kind == "array":
        if "prefixItems" in schema:
            if len(value) != len(schema["prefixItems"]):
                out.append(f"{where}: {len(value)} items where the schema says {len(schema['prefixItems'])}")
            for i, (item, s) in enumerate(zip(value, schema["prefixItems"])):
                _check(item, s, root, f"{where}[{i}]", out)
        elif "items" in schema:
            for i, item in enumerate(value[:1000]):
                _check(item, schema["items"], root, f"{where}[{i}]", out)


def main(argv: list[str]) -> int:
    generated = {SCHEMA_FILE: json.dumps(json_schema(), indent=2) + "\n", TYPESCRIPT_FILE: typescript()}
    if argv == ["--write"]:
        for path, text in generated.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return 0
    stale = [str(p.relative_to(ROOT)) for p, text in generated.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if stale:
        print("out of date (run: python -m mltriage.diagnosis_schema --write): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
