"""The Hub stand-in's model listing (``GET /api/models``, what ``HfApi.list_models`` calls) and header-only
safetensors files; split from ``fakehub.py`` to keep each module readable in one sitting."""

from __future__ import annotations

import json
import struct
from typing import Any

_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
                "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


def safetensors_header_only(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """A safetensors file cut after its header: enough for header reads, whatever sizes the header claims.

    Lets a test serve absurd or negative shapes without allocating their data.
    """
    header: dict[str, object] = {}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        count = 1
        for dim in shape:
            count *= dim
        size = abs(count) * _DTYPE_BYTES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def list_models_answer(hub: Any, token: str | None, query: dict[str, list[str]]) -> tuple[int, object]:
    """Status and JSON body for ``GET /api/models?author=&search=&filter=&pipeline_tag=&limit=&cardData=``.

    Public and gated repos are listed (as on the Hub); private ones only for a granted token. ``search`` is a
    case-insensitive substring of the repo id; ``filter`` values must all be tags; a bad token gets 401.
    """
    if token is not None and token not in hub.valid_tokens:
        return 401, {"error": "Invalid credentials in Authorization header"}
    author = query.get("author", [None])[0]
    search = query.get("search", [""])[0].lower()
    pipeline = query.get("pipeline_tag", [None])[0]
    filters = query.get("filter", [])
    limit = int(query.get("limit", ["1000"])[0])
    items = []
    for repo in sorted(hub.repos.values(), key=lambda r: r.repo_id.lower()):
        if repo.private and (token, repo.repo_id) not in hub.grants:
            continue
        if author and repo.repo_id.split("/", 1)[0] != author:
            continue
        if (search and search not in repo.repo_id.lower()) or (pipeline and repo.pipeline_tag != pipeline):
            continue
        if any(f not in repo.tags for f in filters):
            continue
        item: dict[str, object] = {"id": repo.repo_id, "modelId": repo.repo_id, "private": repo.private,
                                   "gated": repo.gated, "tags": list(repo.tags), "downloads": 0, "likes": 0}
        if repo.pipeline_tag:
            item["pipeline_tag"] = repo.pipeline_tag
        if query.get("cardData") and repo.card_data is not None:
            item["cardData"] = repo.card_data
        items.append(item)
    return 200, items[:limit]


__all__ = ["list_models_answer", "safetensors_header_only"]
