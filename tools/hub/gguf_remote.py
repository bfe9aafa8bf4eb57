"""A Hub GGUF repo's header, read with HTTP Range requests (a few kilobytes of a multi-gigabyte file).

Used with ``live``: the repo's file list says which ``.gguf`` files it has; the one for the asked file type (else
llama.cpp's ``-hf`` default Q4_K_M, else the first) is read up to its first ``tokenizer.*`` key by
``tools/hub/gguf.read_metadata``. Every failure here is a note, not an error: the model card and the repo name
still answer (``tools/hub/gguf_ref.py``).
"""

from __future__ import annotations

import re

from specpick.tools.hub.gguf import GgufMetadata, read_metadata
from specpick.tools.hub.client import HubSettings

# The general.* and architecture keys sit in the first kilobytes; a header past this is not read over the network.
MAX_REMOTE_BYTES = 8 << 20
MAX_LISTED_FILES = 2000
_SKIP = re.compile(r"(?i)(^|/)(mmproj|imatrix)|-0000[2-9]-of-|-000[1-9]\d-of-")


def pick_gguf(files: list[str], quant_token: str | None, default_token: str) -> str | None:
    """The repo file llama.cpp's ``-hf repo[:QUANT]`` would load: the asked type, else the default, else the first
    model file (projector and imatrix files and later shards left out)."""
    ggufs = sorted(f for f in files[:MAX_LISTED_FILES] if f.lower().endswith(".gguf") and not _SKIP.search(f))
    for token in (quant_token, default_token):
        if token:
            hit = next((f for f in ggufs if re.search(rf"(?i)(^|[-_./]){re.escape(token)}([-_.]|$)", f)), None)
            if hit:
                return hit
    return ggufs[0] if ggufs else None


def remote_metadata(repo_id: str, quant_token: str | None, default_token: str) -> tuple[str, GgufMetadata]:
    """(file read, its metadata) for a Hub GGUF repo.

    Raises:
        LookupError: the repo lists no model ``.gguf`` file.
        Exception: any Hub or HTTP failure (the caller turns it into a note).
    """
    from huggingface_hub import HfApi, get_session, hf_hub_url
    from huggingface_hub.utils import build_hf_headers


    settings = HubSettings()
    endpoint = settings.resolved_endpoint()
    info = HfApi(endpoint=endpoint).model_info(repo_id, token=settings.token_arg())
    name = pick_gguf([s.rfilename for s in (info.siblings or [])], quant_token, default_token)
    if name is None:
        raise LookupError(f"{repo_id} lists no .gguf model file")
    url = hf_hub_url(repo_id, name, endpoint=endpoint)
    headers = build_hf_headers(token=settings.token_arg())
    session = get_session()

    def read(offset: int, size: int) -> bytes:
        # Streamed and cut at `size`: a server that ignores Range answers 200 with the whole multi-GB file.
        got = b""
        with session.stream("GET", url, headers={**headers, "Range": f"bytes={offset}-{offset + size - 1}"},
                            follow_redirects=True, timeout=settings.etag_timeout_s) as reply:
            reply.raise_for_status()
            if reply.status_code == 200 and offset:
                raise LookupError(f"{repo_id}/{name}: the server ignored the Range request")
            for chunk in reply.iter_bytes():
                got += chunk
                if len(got) >= size:
                    break
        return got[:size]

    return name, read_metadata(read, what=f"{repo_id}/{name}", max_bytes=MAX_REMOTE_BYTES)
