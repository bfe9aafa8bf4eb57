"""One Hub repo -> one overlay row (model or head), for ``specpick catalog update``.

Each read is a ``config.json`` (size-bounded, parsed as data) and the safetensors headers (HTTP Range reads of
the header only). Rows cite the repo, the commit sha the files were read at, and the date fetched. Failures
raise the project's errors; the caller turns them into skipped rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specpick.tools.catalog.overlay import SkippedRow
from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.catalog.tables import Catalog
from specpick.tools.errors import RemoteDataError
from specpick.tools.hub import client as hub
from specpick.tools.hub.client import EntryMissingError
from specpick.tools.hub.config import safetensors_parameter_count
from specpick.tools.hub.discover import Skip
from specpick.tools.arch.params import count_params
from specpick.tools.hub.config import config_to_spec
from specpick.tools.hub.discover import MAX_CONFIG_DEPTH
from specpick.tools.hub.discover import MAX_MODEL_PARAMS
from specpick.tools.hub.discover import json_depth
from specpick.tools.hub.discover import mtp_head
from specpick.tools.hub.discover import read_head
from specpick.tools.hub.discover import build_head
from specpick.tools.hub.discover import head_params_b

if TYPE_CHECKING:
    from specpick.tools.hub.discover import Skip

MAX_UPDATE_CONFIG_BYTES = 200_000  # real head and model configs are < 20 KB


class RowReader:
    """Collects the rows of one update run: models first, then heads that may point at them."""

    def __init__(self, embedded: Catalog, settings: Any, fetched_on: str,
                 earlier_models: list[ModelSpec] | None = None) -> None:
        self.embedded, self.settings, self.fetched_on = embedded, settings, fetched_on
        # Verifiers a previous update added: a head published today may be for one of them.
        self.earlier_models = list(earlier_models or [])
        self.models: list[ModelSpec] = []
        self.heads: list[HeadSpec] = []
        self.skipped: list[SkippedRow] = []

    def skip(self, repo_id: str, reason: str, detail: str = "") -> None:
        self.skipped.append(SkippedRow(repo_id=repo_id[:200], reason=reason, detail=" ".join(detail.split())[:400]))

    def _source(self, repo_id: str, commit: str | None, what: str) -> str:
        return f"hub:{repo_id}@{commit or 'unknown-commit'} ({what}; fetched {self.fetched_on} into the catalog overlay)"

    def _config(self, repo_id: str) -> tuple[Any, str | None]:

        fetched = hub.fetch_file(repo_id, "config.json", settings=self.settings, max_bytes=MAX_UPDATE_CONFIG_BYTES)
        return hub.read_json_file(fetched), fetched.commit

    def _param_counts(self, repo_id: str, commit: str | None) -> dict[str, int] | Skip | None:
        """Parameters per dtype from the safetensors headers; None without safetensors; a ``Skip`` (bad-size)
        when the headers fail their bounds (``hub/bounds.check_safetensors``: negative or absurd shapes, unknown
        dtypes, offsets that do not match), which is a size fact gone wrong, not a bad config.json."""

        try:
            return safetensors_parameter_count(repo_id, revision=commit, settings=self.settings)
        except EntryMissingError:
            return None
        except RemoteDataError as exc:
            return Skip(repo_id=repo_id, reason="bad-size", detail=exc.message)

    def _runtimes(self, method: str, speculators_format: bool) -> list[str]:
        # speculators-format checkpoints are loaded by vLLM, which reads the verifier from speculators_config
        # (vllm-project/speculators README); others: the engines engine_support.csv says run the method.
        if speculators_format:
            return ["vllm"]
        return [s.engine for s in self.embedded.engine_support if s.method == method and s.support != "no"
                and s.engine != "transformers"]

    def verifier(self, repo_id: str) -> ModelSpec | None:
        found = self.embedded.find_model(repo_id)
        if found is not None and found.repo_id.lower() == repo_id.lower():
            return found
        return next((m for m in [*self.models, *self.earlier_models] if m.repo_id.lower() == repo_id.lower()), None)

    def read_model(self, repo_id: str) -> None:
        """A new verifier: architecture from config.json, exact size from the safetensors headers."""


        config, commit = self._config(repo_id)
        if json_depth(config) > MAX_CONFIG_DEPTH:
            raise RemoteDataError(f"config.json of {repo_id} nests deeper than {MAX_CONFIG_DEPTH}")
        looks_like_head = read_head(repo_id, config, None)
        if not (isinstance(looks_like_head, Skip) and looks_like_head.reason == "not-a-head"):
            # A model publisher's head (listed as text-generation too) must not become a one-layer "model".
            self._head_from_config(repo_id, config, commit, None)
            return
        try:
            spec = config_to_spec(config, repo_id, fact_source="hub")
        except (ValueError, TypeError, ArithmeticError) as exc:  # a field of the wrong type or range
            raise RemoteDataError(f"config.json of {repo_id} has a field of the wrong type: "
                                  f"{type(exc).__name__}") from exc
        counts = self._param_counts(repo_id, commit)
        if isinstance(counts, Skip):
            self.skip(counts.repo_id, counts.reason, counts.detail)
            return
        what = "config.json"
        if counts is not None:
            total = sum(counts.values())
            if any(n < 0 for n in counts.values()) or not 0 < total <= MAX_MODEL_PARAMS:
                self.skip(repo_id, "bad-size", f"safetensors headers give {total:,} parameters")
                return
            estimate = count_params(spec)
            active = estimate.active_b if spec.is_moe else total / 1e9
            spec = spec.model_copy(update={"params_total_b": round(total / 1e9, 3), "params_active_b": round(active, 3)})
            what = "config.json; parameters: safetensors headers" + ("; active: config estimate" if spec.is_moe else "")
        spec = spec.model_copy(update={"source": self._source(repo_id, commit, what)})
        self.models.append(spec)
        if spec.mtp_layers > 0:
            self.heads.append(mtp_head(spec, self._source(repo_id, commit, "config.json num_nextn_predict_layers"),
                                       self._runtimes("mtp", False)))

    def read_head(self, repo_id: str, base_model: str | None) -> None:
        """A head: method and verifier from config.json (or the card's base_model), size from the headers."""
        config, commit = self._config(repo_id)
        self._head_from_config(repo_id, config, commit, base_model)

    def _head_from_config(self, repo_id: str, config: Any, commit: str | None, base_model: str | None) -> None:

        facts = read_head(repo_id, config, base_model)
        if isinstance(facts, Skip):
            self.skip(facts.repo_id, facts.reason, facts.detail)
            return
        verifier = self.verifier(facts.verifier_repo_id)
        if verifier is None:
            self.skip(repo_id, "verifier-not-in-catalog",
                      f"{facts.method} head for {facts.verifier_repo_id}, which neither the embedded catalog nor "
                      "this update's models hold")
            return
        counts = self._param_counts(repo_id, commit)
        size = counts if isinstance(counts, Skip) else head_params_b(repo_id, counts)
        if isinstance(size, Skip):
            self.skip(size.repo_id, size.reason, size.detail)
            return
        what = "config.json" + ("; parameters: safetensors headers" if size is not None else "")
        row = build_head(repo_id, facts, verifier, size, self._runtimes(facts.method, facts.speculators_format),
                         self._source(repo_id, commit, what))
        if isinstance(row, Skip):
            self.skip(row.repo_id, row.reason, row.detail)
        else:
            self.heads.append(row)
