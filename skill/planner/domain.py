"""Outside the model's applicability domain: measure first, starting from the publisher's own setting (issue 34).

When the verifier has architecture features the catalog marks not modelled (models.csv ``unmodelled_features``), the
speed model's figure is no basis for turning speculation off: its range is widened to an assumed floor
(``tools/model/estimate.py``), and when the model's publisher ships speculation for this exact model in its vLLM
recipe (``tools/data/recipes.csv``), that recipe is the evidence the answer starts from. The answer then recommends
the recipe's setting as "measure first", with the `specpick tune` command that measures it, instead of
"no speculation" on a number the model cannot price.
"""

from __future__ import annotations

from dataclasses import replace

from specpick.skill.planner.candidates import Candidate, estimate
from specpick.skill.planner.context import PlanContext
from specpick.tools.catalog.freshness import recipe_rows
from specpick.tools.engines.lookup import engines

TUNE_ENGINES = tuple(e.name for e in engines() if e.launches)  # the engines `specpick tune` serves (EngineSpec)


def recipe_speculation(repo_id: str) -> dict[str, str] | None:
    """The recipe row that serves ``repo_id`` itself with speculation (its default mode first), None if none."""
    rows = [r for r in recipe_rows() if r["model_id"].lower() == repo_id.lower() and r["method"]
            and r["num_speculative_tokens"]]
    return sorted(rows, key=lambda r: r["default_mode"] != "yes")[0] if rows else None


def tune_command(ctx: PlanContext, method: str, engine: str, k: int) -> str:
    """The `specpick tune` call that measures ``method`` around the recipe's draft length on the user's prompts."""
    lengths = " ".join(str(n) for n in sorted({max(1, k - 2), k, k + 2}))
    return (f"specpick tune --serve-model {ctx.dep.verifier.served_repo_id} --method {method} --engine "
            f"{engine if engine in TUNE_ENGINES else 'vllm'} --draft-lengths {lengths} --concurrency "
            f"{ctx.concurrency} --prompts <your prompts.jsonl>")


def measure_first(ctx: PlanContext, candidates: list[Candidate]) -> Candidate | None:
    """The recipe's setting as the answer, for a verifier outside the domain whose publisher ships speculation."""
    feats = ctx.verifier.unmodelled_features
    row = recipe_speculation(ctx.verifier.repo_id) if feats else None
    if row is None:
        return None
    drafter = row["draft_repo_id"].lower()
    cand = next((c for c in candidates if c.feasible and c.strategy == row["method"] and c.estimate is not None
                 and (not drafter or (c.draft_repo or "").lower() == drafter)), None)
    if cand is None:
        return None
    k = int(row["num_speculative_tokens"])
    est = estimate(ctx, cand, num_draft_tokens=k)
    note = (f"Measure first: {', '.join(feats)} in {ctx.verifier.repo_id} are not modelled (models.csv "
            f"unmodelled_features), so the model's {est.speedup:.2f}x ({est.low:.2f}-{est.high:.2f}x) is no basis to "
            f"turn speculation off; the publisher's vLLM recipe serves this exact model with {row['method']} "
            f"k={k} ({row['source']}), so this answer starts from that setting; measure it against plain decoding "
            f"before relying on it: `{tune_command(ctx, cand.strategy, cand.engine, k)}`")
    # The model's own tuning notes (its N, its per-batch schedule) do not apply: the recipe's setting is the start.
    return replace(cand, estimate=est, num_draft_tokens=k, tree=None, notes=[note], measure_first=True)


__all__ = ["measure_first", "recipe_speculation", "tune_command"]
