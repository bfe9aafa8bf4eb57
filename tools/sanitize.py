"""One sanitizer for every string that comes from outside and is shown: model text, server and Hub strings.

Two dangers, one pass:

* **terminal control**: ESC sequences (CSI colours and cursor moves, OSC titles and hyperlinks, DCS) and other
  C0/C1 control characters can rewrite what a terminal shows, so they are removed (``\\n`` and ``\\t`` are kept
  where the text is multi-line);
* **secrets**: the literal values of ``SECRET_ENV_VARS``, anything shaped like an API key or token, and the
  password of a ``scheme://user:password@host`` URL are replaced by ``[redacted]``.

``StreamSanitizer`` does the same for text that arrives in pieces (Claude's streamed deltas): it holds back the
tail that could still be the start of a secret, so a key split over several deltas is still redacted whole.
``errors.PickerError`` runs every message through ``clean``; the CLI's printers, the chat stream and the measure
report call it for the rest.
"""

from __future__ import annotations

import os
import re

# Environment variables whose values are credentials: their literal values are removed wherever they appear.
SECRET_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
REDACTED = "[redacted]"
_KEY_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{6,}"  # Anthropic keys
    r"|\bsk-[A-Za-z0-9_\-]{16,}"  # other sk- style API keys
    r"|\bhf_[A-Za-z0-9]{8,}"  # Hugging Face user access tokens
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}"  # an Authorization header echoed back
    r"|(?i:\b(?:api[_-]?key|x-api-key|password|secret|token)\s*[=:]\s*['\"]?)[^\s'\",;]{8,}"
)
_LABEL = re.compile(r"(?i)bearer\s+|(?:api[_-]?key|x-api-key|password|secret|token)\s*[=:]\s*['\"]?")
# userinfo of a URL (RFC 3986 section 3.2.1): the part after the first ':' is a password, whatever its length.
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/@:]*:)([^\s/@]+)(@)")
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]+")
# Messages-API object ids (tool-use, message, request) are random-looking but public: transcripts need them.
_PUBLIC_ID_PREFIXES = ("toolu_", "srvtoolu_", "msg_", "req_")

# ECMA-48: CSI (ESC [ ... final), OSC / DCS / SOS / PM / APC strings (ended by BEL or ESC \), two-byte ESC forms,
# and the 8-bit C1 equivalents; then any C0/C1 control character left over (DEL included).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROLS_MULTILINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROLS_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Lone surrogates (from bytes decoded with surrogateescape) cannot be encoded for a terminal or an HTTP body.
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def _looks_secret(run: str) -> bool:
    """A long run of base64/hex characters: a secret unless it is a git commit id or reads like a name.

    Commit ids (exactly 40 hex digits) are what revision errors must show; names (repo ids, paths) have few
    digits and no mix of cases inside one dash-free stretch of 32+ characters, which random keys almost always have.
    """
    if run.startswith(_PUBLIC_ID_PREFIXES):
        return False
    if _HEX.fullmatch(run):
        return len(run) != 40
    core = max(re.split(r"[/_\-]", run), key=len)
    return len(core) >= 24 and any(c.isdigit() for c in core) and any(c.isupper() for c in core) and any(
        c.islower() for c in core
    )


def _keep_label(match: str) -> str:
    # "Bearer abc..." -> "Bearer [redacted]", "api_key=abc" -> "api_key=[redacted]": the reader still sees what leaked.
    label = _LABEL.match(match)
    return (label.group(0) if label else "") + REDACTED


def redact(text: str) -> str:
    """Remove credentials from text shown to a user or a model, or written to a file.

    Removes the literal values of ``SECRET_ENV_VARS`` from the environment, URL passwords, then anything shaped
    like a key or token (``sk-ant-...``, ``hf_...``, ``Bearer ...``, ``api_key=...``, long base64 or hex runs). A
    proxy or server that reflects the request's headers into its error text therefore cannot make this tool
    print the key.
    """
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name, "").strip()
        if len(value) >= 8:  # shorter values would blank out ordinary words
            text = text.replace(value, REDACTED)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + m.group(3), text)
    text = _KEY_SHAPES.sub(lambda m: _keep_label(m.group(0)), text)
    return _LONG_RUN.sub(lambda m: REDACTED if _looks_secret(m.group(0)) else m.group(0), text)


def strip_controls(text: str, *, multiline: bool = True) -> str:
    """Remove terminal escape sequences and control characters (keeping newlines and tabs if ``multiline``)."""
    text = _SURROGATES.sub("\ufffd", _ESCAPES.sub("", text))
    return (_CONTROLS_MULTILINE if multiline else _CONTROLS_ONE_LINE).sub("", text)


def clean(text: str, *, multiline: bool = True) -> str:
    """The sanitizer: control characters and escape sequences out, secrets redacted."""
    return redact(strip_controls(str(text), multiline=multiline))


def clean_line(text: str) -> str:
    """``clean`` for one-line fields (a model id, a repo name, an error detail): whitespace runs become one space."""
    return " ".join(clean(text, multiline=False).split())


class StreamSanitizer:
    """``clean`` over text that arrives in pieces.

    Secrets are runs of non-space characters (a label such as ``Bearer`` or ``password:`` and its value are two
    runs), so the last two whitespace-separated runs are held back until more text shows where they end. A run
    longer than ``max_hold`` characters is let through cleaned: no key is that long, and memory stays bounded.
    """

    def __init__(self, max_hold: int = 4096) -> None:
        self._held = ""
        self.max_hold = max_hold

    def feed(self, chunk: str) -> str:
        """Add a piece; return the text that is safe to show now (possibly empty)."""
        self._held += chunk
        cut = _hold_from(self._held)
        if len(self._held) - cut > self.max_hold:
            cut = len(self._held)
        ready, self._held = self._held[:cut], self._held[cut:]
        return clean(ready) if ready else ""

    def flush(self) -> str:
        """The held-back rest, cleaned (call once the stream has ended)."""
        ready, self._held = self._held, ""
        return clean(ready) if ready else ""


# A label whose value may still be coming ("Bearer", "password =", "api_key:"): it is held back with its value.
_TRAILING_LABEL = re.compile(r"(?i)\b(?:bearer|api[_-]?key|x-api-key|password|secret|token)\s*[=:]?\s*['\"]?\s*$")


def _hold_from(text: str) -> int:
    """Index where the last two whitespace-separated runs begin, moved back over a label that precedes them."""
    i = len(text)
    for _ in range(2):
        while i > 0 and text[i - 1].isspace():
            i -= 1
        while i > 0 and not text[i - 1].isspace():
            i -= 1
    label = _TRAILING_LABEL.search(text, max(0, i - 64), i)
    return label.start() if label else i


_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029]")


def json_for_terminal(text: str) -> str:
    """JSON text with DEL, the C1 controls (0x80-0x9f: 0x9b is a one-byte CSI) and line separators as \\u escapes.

    JSON encoders escape only C0 controls, so a served model id holding 0x9b would reach the terminal raw; escaped,
    the document parses to the same strings.
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
