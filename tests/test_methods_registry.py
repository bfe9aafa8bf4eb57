"""The method registry (tools/methods.py) against the data files and the engine emitters it must agree with."""

from __future__ import annotations

import csv
import json
import shlex
from importlib.resources import files

import pytest
import yaml

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.engine_config import build_engine_config, engine_support_row
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.errors import PickerError
from specpick.tools.methods import CANDIDATE_ORDER, METHOD_NAMES, REGISTRY, method_record, methods_where
from specpick.tools import vocab

DATA = files("specpick.tools") / "data"


def _csv(name: str) -> list[dict[str, str]]:
    return list(csv.DictReader((DATA / name).read_text(encoding="utf-8").splitlines()))


def test_names_are_unique_and_the_literal_is_the_registry() -> None:
    assert len(METHOD_NAMES) == len(set(METHOD_NAMES)) == len(REGISTRY)
    assert vocab.METHODS == METHOD_NAMES
    assert vocab.STRATEGIES == (*METHOD_NAMES, "none")
    assert sorted(CANDIDATE_ORDER) == sorted(METHOD_NAMES)


@pytest.mark.parametrize("table", ["engine_support.csv", "heads.csv"])
def test_every_method_in_the_data_is_registered(table: str) -> None:
    """A data row naming a method the registry lacks would be silently unusable."""
    methods = {row["method"] for row in _csv(table)}
    # heads.csv also files heads whose kind no engine path we model runs (MLPSpeculator): they are listed, not used.
    unknown = methods - set(METHOD_NAMES) - {"mlp_speculator"}
    assert not unknown, f"{table} names methods the registry lacks: {sorted(unknown)}"


def test_head_kinds_are_the_kinds_heads_csv_files() -> None:
    """A published head filed under a trained-head method is of a kind some record loads (EAGLE-2 loads EAGLE-1's)."""
    kinds = {r.head_kind for r in REGISTRY if r.head_kind}
    filed = {row["method"] for row in _csv("heads.csv")}
    assert filed & methods_where(verifier_bound=True) - {"eagle2"} <= kinds


def test_sweep_bounds_are_consistent() -> None:
    for r in REGISTRY:
        if r.start_draft_len is not None:
            assert r.max_sweep_draft_len is not None and 1 <= r.start_draft_len <= r.max_sweep_draft_len, r.name


def test_attributes_partition_the_methods() -> None:
    """Every method loads exactly one kind of thing; the families are that split, coarsened."""
    assert methods_where(model_based=True) | methods_where(loads="nothing") == set(METHOD_NAMES)
    assert not methods_where(model_based=True) & methods_where(loads="nothing")
    for r in REGISTRY:
        assert (r.family == "model_free") == (r.loads == "nothing"), r.name
        assert (r.family == "draft") == (r.loads == "draft_lm"), r.name
        assert not (r.copy_based and r.model_based), r.name


def _emitted_key(engine: str, method: str) -> str | None:
    """The method key the emitter writes for ``engine``, read back from its output, or None if it refuses."""
    draft = "org/draft" if method_record(method).separate_repo else None
    inp = EngineConfigInput(engine=engine, method=method, verifier="meta-llama/Llama-3.1-8B-Instruct",
                            draft_model=draft, num_draft_tokens=3)
    try:
        out = build_engine_config(inp)
    except PickerError:
        return None
    if engine == "vllm":
        return json.loads(out.config)["method"]
    if engine == "trtllm":
        return yaml.safe_load(out.config)["speculative_config"]["decoding_type"]
    words = shlex.split(out.config)
    flag = {"sglang": "--speculative-algorithm", "llamacpp": "--spec-type"}[engine]
    return words[words.index(flag) + 1]


def _supported_pairs() -> list[tuple[str, str]]:
    """(engine, method) pairs the support table says today's build runs (its newest row: TensorRT-LLM's
    lookahead, Medusa and EAGLE-1/2 ran only on the TensorRT engine backend it removed), on the engines whose
    configs name a method."""
    cat = get_catalog()
    pairs = {(row["engine"], row["method"]) for row in _csv("engine_support.csv")
             if row["method"] in METHOD_NAMES and cat.support(row["engine"], row["method"]).support in ("yes", "partial")}
    return sorted(p for p in pairs if p[0] in ("vllm", "sglang", "trtllm", "llamacpp"))


@pytest.mark.parametrize(("engine", "method"), _supported_pairs())
def test_engine_keys_match_what_the_emitters_write(engine: str, method: str) -> None:
    """The registry's spelling of a method per engine is the one the engine configuration carries."""
    emitted = _emitted_key(engine, method)
    assert emitted is not None, f"{engine} is listed as running {method} but emits no configuration"
    assert emitted == method_record(method).engine_key(engine), (engine, method, emitted)
