"""A local Hugging Face Hub stand-in for tests: a real HTTP server on 127.0.0.1.

The real ``huggingface_hub`` client is pointed at it (``endpoint=hub.url``).
It serves what the client needs, as listed in docs/references/OFFLINE.md §1e:

* ``HEAD|GET /{repo}/resolve/{rev}/{path}`` with ``X-Repo-Commit`` and ``ETag``
  (both mandatory for the client), ``X-Linked-Size``/``X-Linked-Etag`` for LFS
  files, and ``Range`` requests (used by ``get_safetensors_metadata``);
* ``GET /api/models/{repo}[/revision/{rev}]`` (model info);
* ``GET /api/models?author=&search=&filter=&pipeline_tag=&limit=&cardData=`` (``HfApi.list_models``): public
  and gated repos, ``search`` a case-insensitive substring of the repo id as on the Hub, ``cardData`` from
  ``add_repo(card_data=...)``;
* Hub-style errors chosen by ``X-Error-Code``: RepoNotFound, GatedRepo,
  RevisionNotFound, EntryNotFound; and the Hub's auth behaviour (anonymous
  → 401, valid token without access to a gated repo → 403, bad token → 401).

Failures can be injected (``fail_next``): an HTTP status, or a stall longer
than the client's timeout. Every request is logged for assertions.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import threading
import time
import types
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from tests.support.fakehub_listing import list_models_answer, safetensors_header_only  # noqa: F401 - re-exported

FileContent = bytes | str | dict | list

_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
                "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
# Files the real Hub stores in LFS; the client then reads X-Linked-Size/X-Linked-Etag.
_LFS_SUFFIXES = (".safetensors", ".bin", ".model", ".gguf")


def safetensors_bytes(tensors: dict[str, tuple[str, list[int]]], metadata: dict[str, str] | None = None) -> bytes:
    """Build a valid, zero-filled safetensors file.

    Args:
        tensors: tensor name -> (dtype such as "BF16", shape).
        metadata: optional ``__metadata__`` string map.

    Returns:
        The file's bytes: u64 little-endian header length, JSON header, data.
    """
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    for name, (dtype, shape) in tensors.items():
        count = 1
        for dim in shape:
            count *= dim
        size = count * _DTYPE_BYTES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the format pads the header to 8-byte alignment
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


def _to_bytes(content: FileContent) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode()
    return json.dumps(content).encode()


@dataclass
class _Revision:
    sha: str
    files: dict[str, bytes]
    declared_sizes: dict[str, int] = field(default_factory=dict)


@dataclass
class _Repo:
    repo_id: str
    gated: bool | str
    private: bool
    revisions: dict[str, _Revision]  # branch name -> revision
    card_data: dict | None = None
    pipeline_tag: str | None = None
    tags: tuple[str, ...] = ()


@dataclass
class Failure:
    """An injected failure for the next matching request(s)."""

    status: int | None = 503
    headers: dict[str, str] = field(default_factory=dict)
    count: int = 1
    stall_s: float = 0.0  # > 0: hold the request this long, then drop the connection
    path_contains: str = ""
    skip: int = 0  # let this many matching requests through first


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    range: str | None
    token: str | None
    query: str = ""


class FakeHub:
    """Hub stand-in; use as a context manager or call ``start``/``stop``."""

    def __init__(self, valid_tokens: tuple[str, ...] = ("hf_valid",)) -> None:
        self.valid_tokens = set(valid_tokens)
        self.repos: dict[str, _Repo] = {}
        self.grants: set[tuple[str, str]] = set()
        self.failures: list[Failure] = []
        self.log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- setup -----------------------------------------------------------------
    def add_repo(
        self,
        repo_id: str,
        files: dict[str, FileContent],
        *,
        gated: bool | str = False,
        private: bool = False,
        branches: dict[str, dict[str, FileContent]] | None = None,
        declared_sizes: dict[str, int] | None = None,
        card_data: dict | None = None,
        pipeline_tag: str | None = None,
        tags: tuple[str, ...] = (),
    ) -> str:
        """Add a model repo; returns the commit sha of its ``main`` branch.

        ``declared_sizes`` makes HEAD announce a (larger) size for a file
        without serving that many bytes, to test size bounds cheaply.
        ``card_data`` (the model card's YAML, e.g. ``{"base_model": ...}``), ``pipeline_tag`` and ``tags``
        are what the listing endpoint returns and filters on.
        """
        revisions = {}
        for name, content in {"main": files, **(branches or {})}.items():
            data = {path: _to_bytes(c) for path, c in content.items()}
            digest = hashlib.sha1(repo_id.encode() + name.encode())
            for path in sorted(data):
                digest.update(path.encode() + hashlib.sha1(data[path]).digest())
            revisions[name] = _Revision(digest.hexdigest(), data, dict(declared_sizes or {}))
        self.repos[repo_id] = _Repo(repo_id, gated, private, revisions, card_data, pipeline_tag, tuple(tags))
        return revisions["main"].sha

    def grant(self, token: str, repo_id: str) -> None:
        """Give ``token`` access to a gated or private repo."""
        self.grants.add((token, repo_id))

    def fail_next(self, status: int | None = 503, *, count: int = 1, headers: dict[str, str] | None = None,
                  stall_s: float = 0.0, path_contains: str = "", skip: int = 0) -> None:
        """Answer the next ``count`` matching requests with ``status`` (or a stall), after ``skip`` pass."""
        self.failures.append(Failure(status, dict(headers or {}), count, stall_s, path_contains, skip))

    def requests(self, method: str | None = None, contains: str = "") -> list[LoggedRequest]:
        """Logged requests, filtered by method and a path substring."""
        return [r for r in self.log if (method is None or r.method == method) and contains in r.path]

    # -- lifecycle -------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "FakeHub not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            fakehub = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), name="fakehub",
                                        daemon=True)  # short poll: shutdown() returns at once
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()  # let stalled handlers finish at once
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request logic (called from handler threads) ---------------------------
    def _take_failure(self, path: str) -> Failure | None:
        with self._lock:
            for failure in self.failures:
                if failure.path_contains in path:
                    if failure.skip > 0:
                        failure.skip -= 1
                        return None
                    failure.count -= 1
                    if failure.count <= 0:
                        self.failures.remove(failure)
                    return failure
        return None

    def _authorize(self, repo: _Repo | None, token: str | None) -> tuple[int, str, str] | None:
        """Return (status, error code, message) when access is refused."""
        if token is not None and token not in self.valid_tokens:
            return 401, "", "Invalid credentials in Authorization header"
        if repo is None or (repo.private and (token, repo.repo_id) not in self.grants):
            return (401 if token is None else 404), "RepoNotFound", "Repository Not Found"
        if repo.gated and (token, repo.repo_id) not in self.grants:
            message = f"Access to model {repo.repo_id} is restricted. You must have access to it and be authenticated."
            return (401 if token is None else 403), "GatedRepo", message
        return None

    def _revision(self, repo: _Repo, rev: str) -> _Revision | None:
        if rev in repo.revisions:
            return repo.revisions[rev]
        return next((r for r in repo.revisions.values() if r.sha == rev), None)


_RESOLVE = re.compile(r"^/(?P<repo>[^/]+(?:/[^/]+)?)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_LIST = "/api/models"
_API = re.compile(r"^/api/models/(?P<repo>[^/]+(?:/[^/]+)?)(?:/revision/(?P<rev>[^/]+))?$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fakehub: FakeHub

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - keep test output quiet
        pass

    def do_HEAD(self) -> None:  # noqa: N802 - http.server naming
        self._handle(head=True)

    def do_GET(self) -> None:  # noqa: N802
        self._handle(head=False)

    # -- helpers ---------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None, head: bool = False) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str, head: bool, extra: dict[str, str] | None = None) -> None:
        headers = {"Content-Type": "application/json", "X-Error-Message": message, **(extra or {})}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, json.dumps({"error": message}).encode(), headers, head)

    def _handle(self, head: bool) -> None:
        hub = self.fakehub
        split = urlsplit(self.path)
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        hub.log.append(LoggedRequest(self.command, split.path, self.headers.get("Range"), token, split.query))
        failure = hub._take_failure(split.path)
        if failure is not None:
            if failure.stall_s > 0:
                hub._release.wait(failure.stall_s)
                self.close_connection = True
                return
            self._error(failure.status or 503, "", "injected failure", head, failure.headers)
            return
        match = _RESOLVE.match(split.path)
        if match:
            self._resolve(unquote(match["repo"]), unquote(match["rev"]), unquote(match["path"]), token, head)
            return
        if split.path.rstrip("/") == _LIST and not head:
            self._list_models(token, parse_qs(split.query))
            return
        match = _API.match(split.path)
        if match and not head:
            self._model_info(unquote(match["repo"]), unquote(match["rev"] or "main"), token, parse_qs(split.query))
            return
        self._error(404, "", "Not Found", head)

    def _resolve(self, repo_id: str, rev: str, path: str, token: str | None, head: bool) -> None:
        hub = self.fakehub
        repo = hub.repos.get(repo_id)
        refused = hub._authorize(repo, token)
        if refused:
            self._error(*refused, head=head)
            return
        assert repo is not None
        revision = hub._revision(repo, rev)
        if revision is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
            return
        data = revision.files.get(path)
        if data is None:
            self._error(404, "EntryNotFound", f"{path} does not exist on {rev}", head, {"X-Repo-Commit": revision.sha})
            return
        size = revision.declared_sizes.get(path, len(data))
        blob_sha1 = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        headers = {"X-Repo-Commit": revision.sha, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
        if path.endswith(_LFS_SUFFIXES):
            sha256 = hashlib.sha256(data).hexdigest()
            headers.update({"ETag": f'"{sha256}"', "X-Linked-Etag": f'"{sha256}"', "X-Linked-Size": str(size)})
        else:
            headers["ETag"] = f'"{blob_sha1}"'
        range_header = self.headers.get("Range")
        if range_header and not head:
            start_s, _, end_s = range_header.removeprefix("bytes=").partition("-")
            start = int(start_s)
            end = min(int(end_s) if end_s else len(data) - 1, len(data) - 1)
            chunk = data[start:end + 1]
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            self._send(206, chunk, headers)
            return
        headers["Content-Length"] = str(size if head else len(data))
        self._send(200, data, headers, head)

    def _list_models(self, token: str | None, query: dict[str, list[str]]) -> None:
        status, payload = list_models_answer(self.fakehub, token, query)
        self._send(status, json.dumps(payload).encode(), {"Content-Type": "application/json"})

    def _model_info(self, repo_id: str, rev: str, token: str | None, query: dict[str, list[str]]) -> None:
        hub = self.fakehub
        repo = hub.repos.get(repo_id)
        refused = hub._authorize(repo, token)
        if refused:
            self._error(*refused, head=False)
            return
        assert repo is not None
        revision = hub._revision(repo, rev)
        if revision is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", False)
            return
        info: dict[str, object] = {
            "id": repo_id, "modelId": repo_id, "sha": revision.sha, "private": repo.private, "gated": repo.gated,
            "siblings": [{"rfilename": p, "size": len(d)} for p, d in sorted(revision.files.items())],
        }
        config = revision.files.get("config.json")
        if config is not None:
            try:
                parsed = json.loads(config)
                info["config"] = {k: parsed.get(k) for k in ("architectures", "model_type") if k in parsed}
            except ValueError:
                pass
        expand = query.get("expand")
        if expand:
            info = {k: v for k, v in info.items() if k in expand or k in ("id", "modelId")}
        self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"})


class _NoSleepTime(types.ModuleType):
    """Stands in for the ``time`` module inside huggingface_hub: records sleeps, never waits."""

    def __init__(self) -> None:
        super().__init__("time")
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


@pytest.fixture
def no_hub_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Make huggingface_hub's retry back-off instant; returns the list of requested sleeps.

    ``huggingface_hub.utils._http`` and ``huggingface_hub.file_download`` both
    ``import time`` and call ``time.sleep``; replacing their module reference
    (not ``time.sleep`` itself) keeps every other thread's clock real.
    """
    import huggingface_hub.file_download as file_download
    import huggingface_hub.utils._http as http

    fake = _NoSleepTime()
    monkeypatch.setattr(http, "time", fake)
    monkeypatch.setattr(file_download, "time", fake)
    return fake.sleeps


@pytest.fixture
def fakehub(no_hub_backoff: list[float]):
    """A started FakeHub, stopped after the test. Back-off sleeps are patched out."""
    with FakeHub() as hub:
        yield hub


@pytest.fixture
def hub_settings(fakehub: FakeHub, tmp_path, monkeypatch: pytest.MonkeyPatch):
    """HubSettings pointed at the fake Hub with a fresh cache; HF_TOKEN cleared."""
    from specpick.tools.hub.client import HubSettings

    import huggingface_hub.constants as constants

    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE", "HF_HUB_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    # A token saved by `hf auth login` on this machine must not leak into tests.
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return HubSettings(endpoint=fakehub.url, cache_dir=str(tmp_path / "hub-cache"), offline=False,
                       progress=False, etag_timeout_s=2.0)
