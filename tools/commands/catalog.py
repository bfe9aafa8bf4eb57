"""``specpick catalog status|update``: how old the embedded catalog is, and refreshing it from the Hub.

``update`` lists repos by the publishers of heads and models and by speculator search terms (the real
``huggingface_hub`` client, ``HfApi.list_models``), reads each new repo's ``config.json`` (size-bounded) and
safetensors headers (parameter counts, never weights), and writes the user-local overlay
(``tools/catalog/overlay.py``) that every verb then merges. It is bounded three ways: ``limit_per_query`` repos
per listing, ``max_repos`` repos read in total, ``time_budget_s`` wall-clock. A bad repo is skipped and counted;
a refused or unreachable listing aborts with exit 4 or 5 and leaves the previous overlay as it was.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import threading
import time
from typing import Any, Callable, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, model_validator

from specpick.tools.catalog import overlay as ov
from specpick.tools.catalog.knowledge import knowledge
from specpick.tools.validation import EngineVersion
from specpick.tools.vocab import Engine
from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.methods import CANDIDATE_ORDER, method_record
from specpick.tools.errors import (
    HubAccessError,
    InputError,
    NotFoundError,
    PickerError,
    RemoteDataError,
    UnavailableError,
)
from specpick.tools.catalog.freshness import newest_model
from specpick.tools.catalog.tables import Catalog
from specpick.tools.hub.discover import card_base_model
from specpick.tools.hub.discover import valid_repo
from specpick.tools.commands.catalog_rows import RowReader
from specpick.tools.hub.client import HubSettings
from specpick.tools.errors import file_problem

# Who publishes speculative heads (heads.csv's publishers and the 2025-2026 ones: SpecForge/lmsys, AngelSlim,
# z-lab DFlash, AMD, ibm-fms MLPSpeculators) and the verifiers people serve. Namespaces that publish little else
# are listed whole; mixed ones (thousands of quantized models) only by a head keyword in the repo name.
HEAD_PUBLISHERS = ("yuhuili", "z-lab", "FasterDecoding", "ibm-fms", "AngelSlim", "Tengyunw")
HEAD_PUBLISHER_SEARCHES = (("RedHatAI", "speculator"), ("nvidia", "eagle"), ("lmsys", "eagle"), ("amd", "eagle"))
MODEL_PUBLISHERS = ("meta-llama", "Qwen", "deepseek-ai", "zai-org", "moonshotai", "google", "mistralai")
# Head searches: the speculators keyword, then every method a speculators head config names (registry order of
# the planner's candidates).
HEAD_SEARCHES: tuple[str, ...] = ("speculator",
                                 *(m for m in CANDIDATE_ORDER if method_record(m).speculators_model_type))


def listing_queries() -> list[dict[str, Any]]:
    """The listing requests of one update, models first. Heads newest first (staying current is the point),
    models most downloaded first (the ones people serve)."""
    models = [{"author": a, "pipeline_tag": "text-generation", "sort": "downloads"} for a in MODEL_PUBLISHERS]
    heads = ([{"author": a} for a in HEAD_PUBLISHERS]
             + [{"author": a, "search": term} for a, term in HEAD_PUBLISHER_SEARCHES]
             + [{"search": term} for term in HEAD_SEARCHES])
    return models + [{**q, "sort": "createdAt", "cardData": True} for q in heads]


class CatalogInput(BaseModel):
    """Which catalog action, and the bounds of a Hub refresh."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["status", "update"] = Field(
        "status", description="status: snapshot date and what the overlay adds; update: refresh from the Hub",
        json_schema_extra={"cli": {"positional": True, "metavar": "{status,update}"}})
    limit_per_query: int = Field(30, ge=1, le=500, description="repos per Hub listing request")
    max_repos: int = Field(200, ge=1, le=2000, description="repos read in total (config + safetensors header)")
    time_budget_s: float = Field(300.0, gt=0, le=3600, description="stop reading repos after this many seconds")
    engine: Engine = Field("vllm", description="status: the engine whose release --engine-version names")
    engine_version: EngineVersion | None = Field(
        None, description="status: the engine release you run; warns when it is newer than the snapshot has read")

    @model_validator(mode="after")
    def _bounds_only_for_update(self) -> "CatalogInput":
        # `status` reads no repo: a bound given with it would be silently ignored, so refuse it instead.
        given = sorted(self.model_fields_set & {"limit_per_query", "max_repos", "time_budget_s"})
        if self.action == "status" and given:
            options = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ValueError(f"{options}: for `catalog update` only; `catalog status` reads nothing from the Hub")
        if self.action == "update" and self.model_fields_set & {"engine", "engine_version"}:
            raise ValueError("--engine/--engine-version: for `catalog status` only (the release to compare the "
                             "snapshot against)")
        return self


class CatalogResult(BaseModel):
    """What the embedded snapshot holds, what the overlay adds, and what an update did."""

    action: str
    snapshot_date: str = Field(description="date of the embedded snapshot (tools/data/snapshot.json)")
    embedded_models: int
    embedded_heads: int
    overlay_path: str
    overlay_exists: bool
    newest_model: str = Field("", description="newest engine-recipe model the snapshot holds")
    newest_model_date: str = Field("", description="its recipe's date_added (vllm-project/recipes)")
    newest_model_source: str = ""
    engine: str = ""
    engine_version: str = ""
    newest_engine_release: str = Field("", description="highest release of --engine the snapshot's rows name")
    engine_warning: str = ""
    overlay_disabled: bool = False
    overlay_problem: str = ""
    overlay_fetched_at: str = ""
    overlay_endpoint: str = ""
    overlay_snapshot: str = Field("", description="embedded snapshot date the overlay was compared against")
    new_models: int = Field(0, description="overlay models not in the embedded snapshot")
    new_heads: int = Field(0, description="overlay heads not in the embedded snapshot")
    model_examples: list[str] = Field(default_factory=list)
    head_examples: list[str] = Field(default_factory=list)
    queries: int = 0
    repos_seen: int = 0
    skipped_by_reason: dict[str, int] = Field(default_factory=dict)
    skipped_examples: list[str] = Field(default_factory=list)
    stopped_early: str = ""


def catalog_tool(inp: CatalogInput) -> CatalogResult:
    """Report the catalog's status, or refresh the overlay from the Hub and report the new status."""
    if inp.action == "update":
        update_overlay(inp)
    result = catalog_status(inp.action)
    if inp.action == "status" and inp.engine_version:
        from specpick.tools.catalog.freshness import engine_newer_than_snapshot, newest_engine_release

        result = result.model_copy(update={
            "engine": inp.engine, "engine_version": inp.engine_version,
            "newest_engine_release": newest_engine_release(inp.engine) or "",
            "engine_warning": engine_newer_than_snapshot(inp.engine, inp.engine_version) or ""})
    return result


def catalog_status(action: str = "status") -> CatalogResult:

    embedded = Catalog()  # without the overlay: what this release shipped
    state = ov.read_overlay()
    newest = newest_model({m.repo_id.lower() for m in embedded.models})
    result = CatalogResult(action=action, snapshot_date=ov.snapshot_date(), embedded_models=len(embedded.models),
                           embedded_heads=len(embedded.heads), overlay_path=state.path, overlay_exists=state.exists,
                           overlay_disabled=state.disabled, overlay_problem=state.problem,
                           newest_model=newest.repo_id if newest else "", newest_model_date=newest.date if newest else "",
                           newest_model_source=newest.source if newest else "")
    overlay = state.overlay
    if overlay is None:
        return result
    models, heads = ov.new_rows(embedded, overlay)
    skipped: dict[str, int] = {}
    for row in overlay.skipped:
        skipped[row.reason] = skipped.get(row.reason, 0) + 1
    result = result.model_copy(update={
        "overlay_fetched_at": overlay.fetched_at, "overlay_endpoint": overlay.endpoint,
        "overlay_snapshot": overlay.snapshot, "new_models": len(models),
        "new_heads": len(heads), "model_examples": [m.repo_id for m in models[:5]],
        "head_examples": [f"{h.head_repo_id} -> {h.verifier_repo_id} ({h.method})" for h in heads[:5]],
        "queries": overlay.queries, "repos_seen": overlay.repos_seen, "skipped_by_reason": dict(sorted(skipped.items())),
        "skipped_examples": [f"{s.repo_id}: {s.reason} ({s.detail})" for s in overlay.skipped[:5]],
        "stopped_early": overlay.stopped_early,
    })
    return result


def _still_answers() -> str:
    state = ov.read_overlay()
    if state.overlay and not state.disabled:
        return (f"the embedded snapshot ({ov.snapshot_date()}) and the overlay from {state.overlay.fetched_at[:10]} "
                "still answer")
    return f"the embedded snapshot ({ov.snapshot_date()}) still answers"


def _bounded(call: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Run a Hub listing with a deadline: the client's listing requests have no timeout of their own."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="specpick-hub-listing", daemon=True)
    worker.start()
    worker.join(max(timeout_s, 0.1))
    if worker.is_alive():
        raise UnavailableError(f"the Hub did not answer {what} within {timeout_s:.0f} s: check the connection; "
                               f"{_still_answers()}")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _listing_error(exc: BaseException, what: str) -> PickerError:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, PickerError):
        return exc
    status = exc.response.status_code if isinstance(exc, HfHubHTTPError) and exc.response is not None else None
    if status in (401, 403):
        return HubAccessError(f"the Hub refused {what} (HTTP {status}): check that HF_TOKEN is valid; "
                              f"{_still_answers()}")
    return UnavailableError(f"cannot reach the Hub for {what} ({type(exc).__name__}): check the connection or "
                            f"HF_ENDPOINT; {_still_answers()}")


def _probe(api: Any, timeout_s: float) -> None:
    """One listing request without the client's retries: a dead or refusing Hub fails here in seconds.

    ``list_models`` retries network errors with back-off (about 23 s against a closed port) and has no timeout;
    this asks the same endpoint once, through the client's own session and auth headers.
    """
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    what = "the model listing"
    try:
        response = get_session().get(f"{api.endpoint}/api/models", params={"limit": 1}, timeout=timeout_s,
                                     headers=build_hf_headers(token=api.token))
        hf_raise_for_status(response)
    except Exception as exc:  # noqa: BLE001 - mapped to the project's errors
        raise _listing_error(exc, what) from exc


class _Listing(BaseModel):
    repo_id: str
    base_model: str | None = None


def _list(api: Any, deadline: float, limit: int, **query: Any) -> list[_Listing]:

    what = "the model listing (" + ", ".join(f"{k}={v}" for k, v in query.items() if k in ("author", "search")) + ")"
    try:
        infos = _bounded(lambda: list(api.list_models(limit=limit, **query)), deadline - time.monotonic(), what)
    except Exception as exc:  # noqa: BLE001 - mapped to the project's errors
        raise _listing_error(exc, what) from exc
    out = []
    for info in infos[:limit]:
        repo = valid_repo(getattr(info, "id", None))
        if repo is None:
            continue
        card = getattr(info, "card_data", None)
        card_dict = card.to_dict() if hasattr(card, "to_dict") else card
        out.append(_Listing(repo_id=repo, base_model=card_base_model(card_dict)))
    return out


def _skip_reason(exc: PickerError) -> str:
    # Order matters: the specific subclasses first.
    for cls, reason in ((HubAccessError, "gated"), (NotFoundError, "not-found"), (RemoteDataError, "bad-config"),
                        (UnavailableError, "unreachable"), (InputError, "bad-repo-id")):
        if isinstance(exc, cls):
            return reason
    return "error"


def update_overlay(inp: CatalogInput, settings: Any = None) -> ov.Overlay:
    """Refresh the overlay from the Hub and write it; returns what was written.

    Raises:
        UnavailableError: offline (HF_HUB_OFFLINE) or the Hub's listing cannot be reached (exit 5).
        HubAccessError: the Hub refused the listing (bad token; exit 4).
    """

    settings = settings or HubSettings()
    if settings.is_offline():
        raise UnavailableError(f"offline (HF_HUB_OFFLINE): cannot refresh the catalog from the Hub; "
                               f"{_still_answers()}")
    from huggingface_hub import HfApi

    api = HfApi(endpoint=settings.resolved_endpoint(), token=settings.token_arg())
    _probe(api, settings.etag_timeout_s)
    deadline = time.monotonic() + inp.time_budget_s
    embedded = Catalog()
    queries = listing_queries()
    listed: dict[str, _Listing] = {}
    model_repos: set[str] = set()
    for n, query in enumerate(queries):
        for item in _list(api, deadline, inp.limit_per_query, **query):
            listed.setdefault(item.repo_id, item)
            if n < len(MODEL_PUBLISHERS):
                model_repos.add(item.repo_id)
    previous = ov.load_overlay()
    reader = RowReader(embedded=embedded, settings=settings, fetched_on=_today(),
                       earlier_models=previous.models if previous else [])
    stopped = ""
    # Models first: a head found in the same run may be for a verifier that is new too.
    order = sorted(listed, key=lambda r: (r not in model_repos, r.lower()))
    seen = 0
    looked_at: set[str] = set()
    for repo in order:
        if (embedded.find_model(repo) is not None if repo in model_repos else embedded.head(repo) is not None):
            continue  # the embedded snapshot already has it, cited by hand
        if seen >= inp.max_repos:
            stopped = f"stopped at the cap of {inp.max_repos} repos"
            break
        if time.monotonic() > deadline:
            stopped = f"stopped at the time budget of {inp.time_budget_s:g} s after {seen} repos"
            break
        seen += 1
        looked_at.add(repo)
        try:
            if repo in model_repos:
                reader.read_model(repo)
            else:
                reader.read_head(repo, listed[repo].base_model)
        except PickerError as exc:
            reader.skip(repo, _skip_reason(exc), exc.message)
        except (ValueError, TypeError, KeyError, ArithmeticError, OSError) as exc:
            # Data-shaped failures inside the client or our parsing of one repo's files: that repo is skipped,
            # the refresh goes on (one odd repo must not cost the user the other rows).
            reader.skip(repo, "bad-config", f"{type(exc).__name__}: {exc}")
    overlay = _merge_previous(reader.models, reader.heads, reader.skipped, looked_at=looked_at)
    overlay = overlay.model_copy(update={
        "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "endpoint": settings.resolved_endpoint() or "https://huggingface.co", "snapshot": ov.snapshot_date(),
        "queries": len(queries), "repos_seen": seen, "stopped_early": stopped})
    try:
        ov.write_overlay(overlay)
    except OSError as exc:
        _keep_refresh(overlay, exc)
    knowledge().reload()  # this process (a long-running mcp or chat) answers from the new rows from now on
    return overlay


def _keep_refresh(overlay: ov.Overlay, exc: OSError) -> NoReturn:
    """The overlay's place cannot be written: keep the refresh (a temp file, else stdout) and say where it went.

    The refresh took minutes of Hub reads; losing it to an unwritable ``HF_HOME`` would make the user pay again.
    """
    import tempfile


    target = ov.overlay_path()
    problem = file_problem(exc, target, "write the catalog overlay to")
    reason = problem.message.split("; give a path")[0] if problem else f"cannot write {target}: {exc.strerror or exc}"
    text = json.dumps(overlay.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"
    try:
        fd, kept = tempfile.mkstemp(prefix="specpick-catalog-overlay-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        where = f"the refresh was saved to {kept}"
    except OSError:
        sys.stdout.write(text)
        where = "the refresh was printed on stdout (no temporary folder could be written either)"
    raise InputError(f"{reason}; {where}: set HF_HOME to a folder you can write and copy it to "
                     f"$HF_HOME/specpick/{target.name}, or run `specpick catalog update` again")


def _merge_previous(models: list[ModelSpec], heads: list[HeadSpec], skipped: list[ov.SkippedRow],
                    looked_at: set[str]) -> ov.Overlay:
    """Rows of the previous overlay for repos this run did not look at are kept; the rest are replaced."""
    previous = ov.load_overlay()
    keep_m = [m for m in (previous.models if previous else []) if m.repo_id not in looked_at]
    keep_h = [h for h in (previous.heads if previous else []) if h.head_repo_id not in looked_at]
    restore = [m.model_copy(update={"fact_source": "hub"}) for m in keep_m]
    restore_h = [h.model_copy(update={"fact_source": "hub"}) for h in keep_h]
    return ov.Overlay(fetched_at="", endpoint="", snapshot="", models=restore + models, heads=restore_h + heads,
                      skipped=skipped)


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def render_text(result: CatalogResult) -> str:
    lines = [f"embedded snapshot: {result.snapshot_date} ({result.embedded_models} models, "
             f"{result.embedded_heads} heads)"]
    if result.newest_model:
        lines.append(f"newest model by engine-recipe date: {result.newest_model}, recipe added {result.newest_model_date} "
                     f"({result.newest_model_source})")
    if result.engine_version:
        lines.append(f"warning: {result.engine_warning}" if result.engine_warning else
                     f"{result.engine} {result.engine_version}: not newer than the snapshot's newest "
                     f"{result.engine} release ({result.newest_engine_release})")
    if result.overlay_disabled:
        lines.append(f"overlay: ignored ({ov.DISABLE_ENV} is set to switch it off): {result.overlay_path}")
    elif not result.overlay_exists:
        lines.append(f"overlay: none at {result.overlay_path} (run `specpick catalog update` to refresh from the "
                     "Hub); answers come from the embedded snapshot")
    elif result.overlay_problem:
        lines.append(f"overlay: {result.overlay_path} is ignored: {result.overlay_problem}; run "
                     "`specpick catalog update` to rewrite it")
    else:
        lines.append(f"overlay: {result.overlay_path}, fetched {result.overlay_fetched_at} from "
                     f"{result.overlay_endpoint}")
        lines.append(f"  adds {result.new_models} model(s) and {result.new_heads} head(s) to the snapshot")
        if result.overlay_snapshot and result.overlay_snapshot < result.snapshot_date:
            lines.append(f"  written against an older snapshot ({result.overlay_snapshot}): rows the new snapshot "
                         "holds are served from the snapshot; run `specpick catalog update` to refresh the rest")
        lines += [f"  model {m}" for m in result.model_examples]
        lines += [f"  head  {h}" for h in result.head_examples]
        if result.skipped_by_reason:
            counts = ", ".join(f"{k} {v}" for k, v in result.skipped_by_reason.items())
            lines.append(f"  last update: {result.queries} listing queries, {result.repos_seen} repos read; "
                         f"skipped: {counts}")
            lines += [f"    {s}" for s in result.skipped_examples]
        if result.stopped_early:
            lines.append(f"  {result.stopped_early}")
    return "\n".join(lines)
