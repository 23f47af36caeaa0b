"""The run.json schema (docs/run.schema.json) and the Python types held to each other."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from datetime import datetime
from typing import Any

import pytest
from helpers import SCHEMA

from inferbench import results as R

# JSON Schema types a Python type may stand for.
_JSON_OF = {int: {"integer"}, float: {"number"}, str: {"string"}, bool: {"boolean"}, datetime: {"string"}}


def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())


def resolve(s: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = s["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def schema_types(node: dict[str, Any]) -> set[str]:
    if "enum" in node:
        return {{str: "string", bool: "boolean"}.get(type(v), "number") for v in node["enum"]}
    if "const" in node:
        return {"string"}
    t = node.get("type", "object")
    return set(t) if isinstance(t, list) else {t}


def check_type(s: dict[str, Any], where: str, tp: Any, node: dict[str, Any], seen: list[str]) -> None:
    """check_type asserts that the Python type tp fits the schema node, recursing into dataclasses."""
    node = resolve(s, node)
    want = schema_types(node)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        check_type(s, where, args[0], node, seen)
        return
    if dataclasses.is_dataclass(tp):
        assert "object" in want, f"{where}: {tp.__name__} is a dataclass, the schema says {want}"
        check_dataclass(s, where, tp, node, seen)
    elif origin is list:
        assert "array" in want, f"{where}: a list, the schema says {want}"
        check_type(s, f"{where}[]", typing.get_args(tp)[0], node.get("items", {}), seen)
    elif origin is dict or tp is dict:
        assert "object" in want, f"{where}: a dict, the schema says {want}"
        args = typing.get_args(tp)
        if args and args[1] is not Any and "additionalProperties" in node and isinstance(node["additionalProperties"], dict):
            check_type(s, f"{where}{{}}", args[1], node["additionalProperties"], seen)
    elif tp is Any:
        pass
    else:
        assert _JSON_OF[tp] & want or (tp is float and "integer" in want), f"{where}: {tp.__name__}, the schema says {want}"


def check_dataclass(s: dict[str, Any], where: str, cls: type, node: dict[str, Any], seen: list[str]) -> None:
    seen.append(cls.__name__)
    props = node.get("properties", {})
    required = set(node.get("required", []))
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.metadata.get("json") is not False}
    assert set(props) - set(fields) == set(), f"{where} ({cls.__name__}): schema properties without a field"
    assert set(fields) - set(props) == set(), f"{where} ({cls.__name__}): fields the schema does not have"
    for name, f in fields.items():
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        assert (name in required) != has_default, f"{where}.{name}: required in the schema: {name in required}; default in {cls.__name__}: {has_default}"
        check_type(s, f"{where}.{name}", hints[name], props[name], seen)


def test_run_types_match_schema():
    s = schema()
    seen: list[str] = []
    check_dataclass(s, "run", R.Run, s, seen)
    # Every type a run is made of was reached.
    for cls in (R.Run, R.Config, R.RunSummary, R.Scenario, R.Iterations, R.IterationError, R.Metric, R.Summary, R.Interval):
        assert cls.__name__ in seen


def test_schema_check_fails_on_drift():
    # The check itself can fail: a schema with a property the types lack, and one without a
    # property the types have.
    s = schema()
    s["$defs"]["metric"]["properties"]["brand_new"] = {"type": "string"}
    with pytest.raises(AssertionError, match="without a field"):
        check_dataclass(s, "run", R.Run, s, [])
    s = schema()
    del s["$defs"]["summary"]["properties"]["p99_9"]
    with pytest.raises(AssertionError, match="does not have"):
        check_dataclass(s, "run", R.Run, s, [])
    s = schema()
    s["$defs"]["iterations"] = s["$defs"]["scenario"]["properties"]["iterations"]
    s["$defs"]["scenario"]["properties"]["duration_s"] = {"type": "string"}
    with pytest.raises(AssertionError, match="duration_s"):
        check_dataclass(s, "run", R.Run, s, [])


def test_decode_is_tolerant():
    # Keys a newer inferbench adds are ignored (and kept in raw); absent optional ones default.
    doc = {
        "schema": "inferbench/run/v1", "id": "x", "partial": False, "started_at": "2026-11-25T18:43:27.611167268Z",
        "finished_at": "2026-11-25T18:43:28.61Z",  # Go drops trailing zeros: two digits
        "environment": {}, "config": {"args": ["run"], "future": 1}, "future_top": {"a": 1},
        "summary": {"total": 1, "succeeded": 1, "failed": 0, "skipped": 0, "success_rate": 1},
        "scenarios": [{"benchmark": "b", "scenario": "s", "subject": "exec", "status": "ok", "duration_s": 1,
                       "iterations": {"warmup": 0, "measured": 1, "failed": 0},
                       "metrics": {"m": {"unit": "ms", "better": "lower", "value": None, "new_field": 2}}}],
    }
    r = R.parse_run(json.dumps(doc))
    assert r.raw["future_top"] == {"a": 1}
    assert r.scenarios[0].metrics["m"].value is None
    assert r.scenarios[0].id == "b/s"
    assert r.started_at.microsecond == 611167
    assert r.finished_at is not None and r.finished_at.microsecond == 610000
    with pytest.raises(ValueError, match="not an inferbench run.json"):
        R.parse_run('{"benchmarks": []}')
    del doc["scenarios"][0]["iterations"]
    with pytest.raises(ValueError, match="iterations"):
        R.parse_run(json.dumps(doc))
