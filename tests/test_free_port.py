"""The vLLM fixtures' port picker: a server binds its port only after loading its model, so a port handed out once
must not be handed out again soon, in this process or another (CI once started the speculative and the baseline
server on one port, and every measure test read the wrong server)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.vllm_server import free_port


def test_ports_are_never_handed_out_twice_in_a_row():
    ports = [free_port() for _ in range(40)]
    assert len(set(ports)) == len(ports)


def test_another_process_gets_other_ports():
    mine = {free_port() for _ in range(10)}
    out = subprocess.run([sys.executable, "-c", "from tests.support.vllm_server import free_port; "
                          "print(' '.join(str(free_port()) for _ in range(10)))"],
                         capture_output=True, text=True, check=True, timeout=60)
    theirs = {int(p) for p in out.stdout.split()}
    assert len(theirs) == 10 and not mine & theirs
