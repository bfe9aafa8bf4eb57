"""The one reader of the files a user hands the tool: prompts, samples, tune results, measurement reports, --expect.

Every such file is read through ``read_user_text`` and every JSON document or JSONL line in it parsed with
``loads_user_json`` (issue 39, causes 1 and 5): a FIFO, a device or a link to ``/dev/zero`` is refused before it is
opened for reading (it would hang or fill memory), the size is bounded before the read, the text must be UTF-8,
and JSON is depth-checked before ``json.loads`` recurses (a line nested 100,000 deep was a ``RecursionError`` in
every reader), with NaN and Infinity refused (JSON has no such numbers; Python's parser accepts them). Each error is
one line naming the file (and line) and what to do.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from specpick.tools.errors import InputError, NotFoundError, RemoteDataError, file_problem
from specpick.tools.hub.bounds import check_json_depth

# Deeper than any report or prompt the tool writes or reads (a measure report nests about 6 levels; chat messages 4).
MAX_USER_JSON_DEPTH = 64


def check_regular_file(path: Path, what: str) -> None:
    """Refuse anything but an existing regular file (after links), before it is opened.

    Raises:
        NotFoundError: no such file.
        InputError: a folder, FIFO, socket or device.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise NotFoundError(f"{what} {path} does not exist: give an existing file") from None
    except OSError as exc:
        raise file_problem(exc, path, f"read {what}") or InputError(f"{what} {path}: cannot be read") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{what} {path} is not a file but a folder: give a regular file")
    if not stat.S_ISREG(mode):
        raise InputError(f"{what} {path} is not a regular file (a pipe, socket or device; reading it could hang "
                         "or never end): give a regular file")


def read_user_bytes(path: Path, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see ``check_regular_file``)."""
    check_regular_file(path, what)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)  # bounded even if the file grows while it is read
    except OSError as exc:
        raise file_problem(exc, path, f"read {what}") or InputError(f"{what} {path}: cannot be read") from None
    if len(data) > max_bytes:
        raise InputError(f"{what} {path} is larger than {_size(max_bytes)}: give a smaller file")
    return data


def read_user_text(path: Path, what: str, max_bytes: int) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``."""
    data = read_user_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} {path} is not UTF-8 text (byte {exc.start}): save it as UTF-8") from None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:20]} is too large for a float")
    return value


def loads_user_json(text: str, origin: str, depth: int = MAX_USER_JSON_DEPTH) -> Any:
    """``json.loads`` of one document or JSONL line, depth-checked first; NaN / Infinity refused.

    ``origin`` names where the text came from ("prompts.jsonl:12") in the one-line error.
    """
    try:
        check_json_depth(text, origin, limit=depth)
    except RemoteDataError:
        raise InputError(f"{origin}: JSON nested more than {depth} levels deep; no file this tool reads is") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InputError(f"{origin}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{origin}: not valid JSON ({str(exc)[:80]})") from None
    try:  # a \ud800 escape parses to a lone surrogate, which no tokenizer or UTF-8 writer takes
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{origin}: a string holds a lone surrogate escape (e.g. \\ud800), which is not "
                         "text; remove it") from None
    return value


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 2**20 else f"{n >> 10} KiB"


__all__ = ["MAX_USER_JSON_DEPTH", "check_regular_file", "loads_user_json", "read_user_bytes",
           "read_user_text"]
