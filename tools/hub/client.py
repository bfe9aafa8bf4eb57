"""Hugging Face Hub access: small files only, bounded, cached, with an honest source.

Everything that talks to the Hub goes through here, so the rules live in one
place:

* repo ids and revisions are validated before any I/O (``validate_repo_id``);
* only small files are fetched (config, tokenizer, safetensors *headers*); a
  file's size is read with a HEAD request before its body is downloaded, and
  anything above the bound is refused;
* the ecosystem's settings are honoured: ``HF_TOKEN`` (read by the client per
  call, never printed), ``HF_HOME``/``HF_HUB_CACHE``, ``HF_HUB_OFFLINE``,
  ``HF_ENDPOINT`` and a revision pin;
* offline mode, a timeout or a network failure falls back to the local cache;
  every result says which source answered (``hub`` or ``hub-cache``) and why it
  fell back; callers add the catalog as the last fallback;
* Hub errors become ``PickerError`` subclasses with one-line, actionable messages.

``huggingface_hub`` is imported inside functions: ``specpick --help`` and an
offline ``recommend`` must not pay for it.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from specpick.tools.errors import (
    HubAccessError,
    NotFoundError,
    PickerError,
    RemoteDataError,
    UnavailableError,
    close_matches_hint,
)
from specpick.tools.hub.repo_ids import validate_repo_id, validate_revision  # callers keep hub.validate_*
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.hub.bounds import loads_bounded

HubSource = Literal["hub", "hub-cache"]

_COMMIT_RE = re.compile(r"/snapshots/([0-9a-f]{40})/")
_TRUE = {"1", "on", "yes", "true"}

# Upper bounds for what we download. Real config.json files are < 20 KB; the
# largest real tokenizer.json we know of (Gemma-3, 262k entries) is ~33 MB.
MAX_CONFIG_BYTES = 1_000_000
MAX_TOKENIZER_BYTES = 50_000_000


class HubSettings(BaseModel):
    """Where and how to reach the Hub. ``None`` fields follow the environment at call time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint: str | None = Field(None, description="Hub URL; None = HF_ENDPOINT, else huggingface.co")
    cache_dir: str | None = Field(None, description="cache folder; None = HF_HUB_CACHE or $HF_HOME/hub")
    offline: bool | None = Field(None, description="never touch the network; None = HF_HUB_OFFLINE")
    # Excluded from dumps and repr: a token must never reach output or logs.
    token: SecretStr | None = Field(None, exclude=True, repr=False, description="None = HF_TOKEN / saved login")
    progress: bool | None = Field(None, description="download progress bars; None = only if stderr is a TTY")
    progress_delay_s: float = Field(0.5, ge=0, description="show a bar only for downloads slower than this")
    etag_timeout_s: float = Field(10.0, gt=0, description="timeout for metadata (HEAD) requests")
    max_config_bytes: int = Field(MAX_CONFIG_BYTES, gt=0)
    max_tokenizer_bytes: int = Field(MAX_TOKENIZER_BYTES, gt=0)

    def is_offline(self) -> bool:
        """Offline if asked here, by HF_HUB_OFFLINE now, or by the client's import-time constant."""
        if self.offline is not None:
            return self.offline
        import huggingface_hub.constants as constants

        return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE or bool(constants.HF_HUB_OFFLINE)

    def resolved_endpoint(self) -> str | None:
        return self.endpoint or os.environ.get("HF_ENDPOINT") or None

    def resolved_cache_dir(self) -> str:
        if self.cache_dir:
            return self.cache_dir
        if os.environ.get("HF_HUB_CACHE"):
            return os.environ["HF_HUB_CACHE"]
        home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
        return os.path.join(home, "hub")

    def token_arg(self) -> str | None:
        """Token for the client: the explicit one, else None so the client reads HF_TOKEN itself."""
        return self.token.get_secret_value() if self.token is not None else None

    def show_progress(self) -> bool:
        return self.progress if self.progress is not None else sys.stderr.isatty()


class FetchedFile(BaseModel):
    """A small repo file on local disk, and where it came from."""

    model_config = ConfigDict(frozen=True)

    repo_id: str
    filename: str
    revision: str = Field(description="the revision asked for (branch, tag or sha)")
    commit: str | None = Field(None, description="commit sha the file belongs to, when known")
    path: str
    size_bytes: int
    source: HubSource
    fallback_reason: str = Field("", description="why the cache answered instead of the Hub")


class EntryMissingError(NotFoundError):
    """The repo exists but this file does not; callers may try the next candidate file."""

    def __init__(self, message: str, filename: str) -> None:
        super().__init__(message)
        self.filename = filename


def close_repo_matches(repo_id: str, limit: int = 3) -> list[str]:
    """Catalog repo ids that look like ``repo_id`` (for 'did you mean')."""

    names = [m.repo_id for m in get_catalog().models] + [h.head_repo_id for h in get_catalog().heads]
    lowered = {n.lower(): n for n in names}
    hits = difflib.get_close_matches(repo_id.lower(), list(lowered), n=limit, cutoff=0.6)
    if not hits:  # a bare model name ("Llama-3.1-8B") still deserves suggestions
        tail = repo_id.lower().rsplit("/", 1)[-1]
        hits = [n for n in lowered if tail and tail in n][:limit]
    return [lowered[h] for h in hits]


def _tqdm_class(settings: HubSettings) -> type:
    """A progress-bar class: only on a terminal, only after ``progress_delay_s``, always on stderr."""
    from huggingface_hub.utils import tqdm as hf_tqdm

    show, delay = settings.show_progress(), settings.progress_delay_s

    class _Bar(hf_tqdm):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["file"] = sys.stderr  # stdout carries --json output
            kwargs.setdefault("delay", delay)
            if not show:
                kwargs["disable"] = True
            elif kwargs.get("disable") is None:
                kwargs["disable"] = False  # asked for explicitly: show even when tqdm sees no TTY
            super().__init__(*args, **kwargs)

    return _Bar


def _is_network_failure(exc: BaseException) -> bool:
    """Failures that say 'the Hub could not be reached', for which the cache may answer."""
    import httpx2
    from huggingface_hub.errors import FileMetadataError, HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled

    if isinstance(exc, (httpx2.TransportError, OfflineModeIsEnabled, LocalEntryNotFoundError, FileMetadataError)):
        return True
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        # 408/429/5xx: the Hub is overloaded or down, not refusing us.
        return exc.response.status_code in (408, 429) or exc.response.status_code >= 500
    return False


def map_hub_error(exc: BaseException, repo_id: str, revision: str, filename: str | None = None) -> PickerError:
    """Translate a huggingface_hub / httpx2 exception into our hierarchy.

    ``GatedRepoError`` is tested before ``RepositoryNotFoundError``: it is a subclass.
    """
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        NotASafetensorsRepoError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    what = f"{filename} in {repo_id}" if filename else repo_id
    if isinstance(exc, PickerError):
        return exc
    if isinstance(exc, GatedRepoError):
        return HubAccessError(
            f"{repo_id} is gated: accept its licence on https://huggingface.co/{repo_id} and set HF_TOKEN "
            "to a token of that account"
        )
    if isinstance(exc, RepositoryNotFoundError):
        hint = close_matches_hint(close_repo_matches(repo_id))
        return NotFoundError(f"repo {repo_id} not found on the Hub (or private: set HF_TOKEN).{hint}")
    if isinstance(exc, RevisionNotFoundError):
        return NotFoundError(f"revision {revision!r} not found in {repo_id}: check --revision (branch, tag or sha)")
    if isinstance(exc, RemoteEntryNotFoundError):
        return EntryMissingError(f"{what} does not exist at revision {revision!r}", filename or "")
    if isinstance(exc, NotASafetensorsRepoError):
        return EntryMissingError(f"{repo_id} has no safetensors weights to read a header from", filename or "")
    if isinstance(exc, HfHubHTTPError) and exc.response is not None and exc.response.status_code in (401, 403):
        return HubAccessError(f"the Hub refused access to {repo_id} (HTTP {exc.response.status_code}): "
                              "check that HF_TOKEN is valid and has access")
    if isinstance(exc, OSError) and not isinstance(exc, HfHubHTTPError) and "onsistency" in str(exc):
        # The client compares the bytes received with the size the HEAD answer announced.
        return RemoteDataError(f"download of {what} does not match the size the Hub announced: retry; "
                               "if it persists, the file on the Hub is broken")
    if _is_network_failure(exc):
        return UnavailableError(f"cannot reach the Hub for {what} ({type(exc).__name__}) and nothing is cached: "
                                "check the connection, or set HF_ENDPOINT")
    return RemoteDataError(f"unexpected Hub answer for {what}: {type(exc).__name__}")


def _commit_of(path: str) -> str | None:
    match = _COMMIT_RE.search(Path(path).as_posix())
    return match.group(1) if match else None


def _check_size(size: int | None, limit: int, repo_id: str, filename: str) -> None:
    if size is not None and size > limit:
        raise RemoteDataError(
            f"{filename} in {repo_id} is {size:,} bytes, above the {limit:,}-byte bound for this file: "
            "not downloading it (is this a weights file under a tokenizer/config name?)"
        )


def _from_cache(repo_id: str, filename: str, revision: str, settings: HubSettings, reason: str) -> FetchedFile:
    """Answer from the local cache after the Hub could not be asked."""
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.file_download import _CACHED_NO_EXIST

    found = try_to_load_from_cache(repo_id, filename, cache_dir=settings.resolved_cache_dir(), revision=revision)
    if found is _CACHED_NO_EXIST:
        raise EntryMissingError(f"{filename} in {repo_id} does not exist (cached answer; {reason})", filename)
    if not isinstance(found, str):
        if settings.is_offline():
            raise UnavailableError(
                f"offline and nothing cached for {repo_id} ({filename}): run once online or set HF_ENDPOINT"
            )
        raise UnavailableError(f"{reason}, and nothing cached for {repo_id} ({filename}): check the connection, "
                               "run once online, or set HF_ENDPOINT")
    return FetchedFile(repo_id=repo_id, filename=filename, revision=revision, commit=_commit_of(found), path=found,
                       size_bytes=os.path.getsize(found), source="hub-cache", fallback_reason=reason)


def _remember_missing(repo_id: str, filename: str, revision: str, settings: HubSettings) -> None:
    """Let the client record the file's absence in the cache (``.no_exist``), so offline runs know it too."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

    try:
        hf_hub_download(repo_id, filename, revision=revision, cache_dir=settings.resolved_cache_dir(),
                        endpoint=settings.resolved_endpoint(), token=settings.token_arg(),
                        etag_timeout=settings.etag_timeout_s)
    except RemoteEntryNotFoundError:
        pass  # expected: the marker is written as this error is raised
    except Exception:  # noqa: BLE001 - best effort; the caller reports the missing file anyway
        pass


def fetch_file(repo_id: str, filename: str, *, revision: str | None = None, settings: HubSettings | None = None,
               max_bytes: int | None = None) -> FetchedFile:
    """Download one small file (or reuse the cached copy) with a size bound.

    One HEAD request reads the file's size and commit; the body is downloaded
    only if it fits ``max_bytes`` and is not already cached for that commit.

    Args:
        repo_id: Hub model repo id.
        filename: path inside the repo (fixed names chosen by our code, never user paths).
        revision: branch, tag or commit sha; ``None`` = ``main``.
        settings: endpoint, cache, offline and token settings; ``None`` = environment.
        max_bytes: refuse files larger than this (default: the config bound).

    Returns:
        The file on disk, with ``source`` ``hub`` or ``hub-cache`` and the reason for a fallback.

    Raises:
        InputError: invalid repo id or revision.
        HubAccessError: gated or private repo, or a rejected token.
        NotFoundError: unknown repo (with close catalog matches) or revision.
        EntryMissingError: the file does not exist in the repo.
        RemoteDataError: the file is larger than ``max_bytes``.
        UnavailableError: offline or unreachable and nothing cached.
    """
    settings = settings or HubSettings()
    validate_repo_id(repo_id)
    rev = validate_revision(revision)
    limit = max_bytes or settings.max_config_bytes
    if settings.is_offline():
        fetched = _from_cache(repo_id, filename, rev, settings, "offline mode (HF_HUB_OFFLINE)")
        _check_size(fetched.size_bytes, limit, repo_id, filename)
        return fetched

    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.errors import RemoteEntryNotFoundError

    endpoint, token = settings.resolved_endpoint(), settings.token_arg()
    try:
        # No retries here (retry_on_errors=False): a dead Hub falls back to the cache at once
        # instead of sitting through the client's 23 s of back-off.
        meta = get_hf_file_metadata(hf_hub_url(repo_id, filename, revision=rev, endpoint=endpoint), token=token,
                                    timeout=settings.etag_timeout_s, endpoint=endpoint)
        _check_size(meta.size, limit, repo_id, filename)
        path = hf_hub_download(repo_id, filename, revision=rev, cache_dir=settings.resolved_cache_dir(),
                               endpoint=endpoint, token=token, etag_timeout=settings.etag_timeout_s,
                               tqdm_class=_tqdm_class(settings))
    except PickerError:
        raise
    except Exception as exc:  # noqa: BLE001 - every Hub/httpx2 failure is mapped below
        if isinstance(exc, RemoteEntryNotFoundError):
            _remember_missing(repo_id, filename, rev, settings)
        if _is_network_failure(exc):
            fetched = _from_cache(repo_id, filename, rev, settings, f"Hub unreachable ({type(exc).__name__})")
            _check_size(fetched.size_bytes, limit, repo_id, filename)
            return fetched
        raise map_hub_error(exc, repo_id, rev, filename) from exc
    size = os.path.getsize(path)
    _check_size(size, limit, repo_id, filename)  # the server may have sent more than it announced
    return FetchedFile(repo_id=repo_id, filename=filename, revision=rev, commit=meta.commit_hash or _commit_of(path),
                       path=str(path), size_bytes=size, source="hub")


def read_json_file(fetched: FetchedFile) -> dict[str, Any]:
    """Parse a fetched JSON file as data; malformed content is a RemoteDataError."""

    with open(fetched.path, "rb") as handle:
        # Bounded read: a cached file is not re-checked against the download bound, so bound it here too.
        raw = handle.read(MAX_TOKENIZER_BYTES + 1)
    if len(raw) > MAX_TOKENIZER_BYTES:
        raise RemoteDataError(f"{fetched.filename} in {fetched.repo_id} is over {MAX_TOKENIZER_BYTES:,} bytes: "
                              "not a JSON metadata file; pin another --revision")
    data = loads_bounded(raw, f"{fetched.filename} in {fetched.repo_id}")
    if not isinstance(data, dict):
        raise RemoteDataError(f"{fetched.filename} in {fetched.repo_id} is JSON but not an object")
    if fetched.filename == "config.json":  # a model's or a head's: one validator before any reader sees it
        from specpick.tools.hub.bounds import check_hub_config

        check_hub_config(data, f"config.json in {fetched.repo_id}")
    return data


def fetch_json(repo_id: str, filename: str, *, revision: str | None = None, settings: HubSettings | None = None,
               max_bytes: int | None = None) -> tuple[dict[str, Any], FetchedFile]:
    """``fetch_file`` + ``read_json_file``. Raises what both raise."""
    fetched = fetch_file(repo_id, filename, revision=revision, settings=settings, max_bytes=max_bytes)
    return read_json_file(fetched), fetched


def fetch_optional(repo_id: str, filename: str, **kwargs: Any) -> FetchedFile | None:
    """``fetch_file`` that returns None when the file does not exist (other errors propagate)."""
    try:
        return fetch_file(repo_id, filename, **kwargs)
    except EntryMissingError:
        return None
