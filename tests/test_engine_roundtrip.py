"""emit -> parse round trip, per engine, for every method the engine runs (issue 33).

``parse`` is each engine's inverse of ``emit`` (tools/engines/); the evals read configurations with it. For a
generated setting the parsed configuration must state the method's engine key, the draft length, the draft repo and
the tree the setting asked for, wherever the engine has words for them.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.engine_config import build_engine_config
from specpick.tools.engines.lookup import engine
from specpick.tools.engines.registry import BUILTIN
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.methods import REGISTRY, method_record

VERIFIER = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "example-org/some-drafter"


def _runs(engine_name: str) -> list[str]:
    """Methods the engine runs today (support matrix) and has a spelling for."""
    cat = get_catalog()
    return [r.name for r in REGISTRY if r.engine_key(engine_name) or engine_name == "transformers"
            if (row := cat.support(engine_name, r.name, None)) is not None and row.runs_at(None)]


PAIRS = [(e, m) for e in BUILTIN for m in _runs(e)]


def test_every_engine_runs_some_method() -> None:
    assert {e for e, _ in PAIRS} == set(BUILTIN)


def _setting(engine_name: str, method: str, n: int, top_k: int) -> EngineConfigInput:
    rec = method_record(method)
    tree_ok = method in engine(engine_name).tree_methods
    return EngineConfigInput(engine=engine_name, method=method, verifier=VERIFIER,  # type: ignore[arg-type]
                             draft_model=DRAFT if rec.separate_repo else None, num_draft_tokens=n,
                             tree_top_k=top_k if tree_ok else 1, gguf_source="org/model-GGUF:Q4_K_M")


@pytest.mark.parametrize(("engine_name", "method"), PAIRS, ids=[f"{e}-{m}" for e, m in PAIRS])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(min_value=1, max_value=7), top_k=st.integers(min_value=1, max_value=4))
def test_parse_inverts_emit(engine_name: str, method: str, n: int, top_k: int) -> None:
    rec = method_record(method)
    inp = _setting(engine_name, method, n, top_k)
    cfg = build_engine_config(inp)
    parsed = engine(engine_name).parse(cfg)
    assert parsed is not None, cfg.config
    if engine_name != "transformers":
        assert parsed["key"] in rec.engine_names(engine_name), (parsed["key"], method)
    if not (engine_name == "trtllm" and method == "lookahead"):  # lookahead's pool has no draft length
        assert parsed["num_draft_tokens"] == n, (cfg.config, parsed)
    if rec.separate_repo and engine_name != "llamacpp":  # llama-server loads a converted GGUF of the drafter
        assert parsed["draft_model"] == DRAFT
    if inp.tree_top_k > 1:
        assert parsed["tree_top_k"] == inp.tree_top_k


@pytest.mark.parametrize(("engine_name", "method"), PAIRS[:: max(1, len(PAIRS) // 12)])
def test_the_engine_reads_its_method_spellings_from_the_method_record(engine_name: str, method: str) -> None:
    assert engine(engine_name).method_names(method) == method_record(method).engine_names(engine_name)
    assert engine(engine_name).method_names("none") == ()
