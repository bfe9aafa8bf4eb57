"""`specpick measure` against a stand-in llama-server: alpha from each response's timings (draft_n, draft_n_accepted).

The stand-in answers the way llama-server does (tools/server/README.md @00dc805): GET /v1/models lists the loaded
GGUF, GET /metrics is 404 unless started with --metrics ("This endpoint is only accessible if --metrics is set"),
and a streamed /v1/chat/completions ends with a chunk carrying `usage` and a `timings` object ("Hash of timing
information about the completion such as the number of tokens predicted_per_second"), which holds draft_n and
draft_n_accepted when a draft ran. Each response below drafts 12 tokens and has 9 accepted, so alpha is 9/12.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from specpick.tools.errors import RemoteDataError
from specpick.tools.measure.metrics import acceptance_from_llama_timings
from specpick.tools.measure.run import MeasureInput, run_measure

DRAFT_N, ACCEPTED = 12, 9


def _server(timings: dict | None) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server API
            if self.path == "/v1/models":
                body = json.dumps({"object": "list", "data": [{"id": "Llama-3.1-8B-Instruct-Q4_K_M.gguf"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(404)  # /metrics without --metrics
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            chunks = [{"choices": [{"delta": {"content": w}}]} for w in ("one ", "two ", "three")]
            last: dict = {"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 24}}
            if timings is not None:
                last["timings"] = {"predicted_n": 24, "predicted_per_second": 41.5, **timings}
            body = "".join(f"data: {json.dumps(c)}\n\n" for c in [*chunks, last]) + "data: [DONE]\n\n"
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture()
def llama_server() -> Iterator[str]:
    yield from _server({"draft_n": DRAFT_N, "draft_n_accepted": ACCEPTED})


@pytest.fixture()
def llama_server_no_draft() -> Iterator[str]:
    yield from _server(None)


@pytest.fixture()
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_text("\n".join(json.dumps({"prompt": f"question {i}"}) for i in range(3)) + "\n")
    return path


def test_measure_reads_alpha_from_llama_server_timings(llama_server: str, prompts: Path) -> None:
    report = run_measure(MeasureInput(endpoint=llama_server, prompts=prompts, concurrency=[1], warmup=0,
                                      num_draft_tokens=4))
    assert report.engine == "llamacpp"
    acc = report.results[0].acceptance
    assert acc.source == "llamacpp-timings"
    assert acc.alpha == pytest.approx(ACCEPTED / DRAFT_N)
    # tau takes every draft as N = 4 tokens: 3 drafts of 4 per response, 9 accepted -> 1 + 9/3
    assert acc.tau == pytest.approx(1 + ACCEPTED / (DRAFT_N / 4))
    assert report.acceptance.alpha == pytest.approx(ACCEPTED / DRAFT_N)
    assert report.acceptance.num_draft_tokens == 3 * DRAFT_N


def test_a_llama_server_without_a_draft_is_not_measured_as_speculative(llama_server_no_draft: str,
                                                                      prompts: Path) -> None:
    from specpick.tools.errors import ServiceError

    with pytest.raises(ServiceError, match="llama-server --spec-type"):
        run_measure(MeasureInput(endpoint=llama_server_no_draft, prompts=prompts, concurrency=[1], warmup=0))


def test_timings_without_n_give_alpha_and_no_tau() -> None:
    acc = acceptance_from_llama_timings([(DRAFT_N, ACCEPTED)], None)
    assert acc.alpha == pytest.approx(ACCEPTED / DRAFT_N) and acc.tau is None


def test_more_accepted_than_drafted_is_bad_data() -> None:
    with pytest.raises(RemoteDataError, match="draft_n_accepted"):
        acceptance_from_llama_timings([(3, 5)], 4)
