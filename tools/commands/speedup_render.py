"""Short human rendering of a ``SpeedupResult`` (the JSON form is the model itself)."""

from __future__ import annotations

from typing import Any


def render_text(result: Any) -> str:
    """A few lines: the estimate, acceptance, costs, sweeps and the stated assumptions."""
    r = result
    shape = f"N={r.num_draft_tokens}"
    if r.tree is not None:
        shape = f"tree depth {r.tree.depth}, top-{r.tree.top_k}, {r.tree.num_verify_tokens} verify tokens"
    who = f"{r.method}" + (f" (draft {r.draft})" if r.draft else "")
    out = [
        f"{who} on {r.verifier}, {r.gpus}x {r.gpu}, {r.workload}, T={r.temperature:g}, batch {r.batch}, "
        f"{r.engine or r.harness} overheads",
        f"  speedup      {r.speedup:.2f}x   (range {r.low:.2f}-{r.high:.2f}x)   {shape}",
        f"  acceptance   tau {r.tau:.2f} (range {r.tau_low:.2f}-{r.tau_high:.2f})"
        + (f", alpha {r.alpha:.3f}" if r.alpha is not None else "") + f"  <- {r.acceptance_source}",
        f"  cycle cost   k {r.cycle_cost:.3f} = draft {r.cost_ratio:.3f} x steps + verify {r.verify_cost:.3f}"
        f" + overhead {r.engine_overhead:.3f}   (plain step {r.base_step.total_ms:.2f} ms, "
        f"{r.base_step.bound}-bound)",
    ]
    if r.draft_sweep:
        pts = "  ".join(f"{p.num_draft_tokens}:{p.speedup:.2f}" for p in r.draft_sweep)
        out.append(f"  best N       {r.best_num_draft_tokens}   (N:speedup {pts})")
    if r.batch_sweep:
        shown = (1, 4, 16, 32, 64, 128, 256, 512)
        pts = "  ".join(f"{p.batch}:{p.speedup:.2f}" for p in r.batch_sweep if p.batch in shown)
        be = f"stops paying above ~{r.break_even_concurrency}" if r.break_even_concurrency else \
            "pays at every swept concurrency (<= 512)"
        out.append(f"  concurrency  {be}   (batch:speedup {pts})")
    out.append("  assumptions:")
    out += [f"    - {a}" for a in r.assumptions]
    return "\n".join(out)
