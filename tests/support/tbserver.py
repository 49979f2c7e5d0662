"""Run a real ``tensorboard`` process on 127.0.0.1 and query its HTTP data API.

Used by the live tests of every plugin. Each server is started with ``--load_fast=false``
(TensorBoard's Python loader) or ``--load_fast=true`` (its Rust data server), reloads every
second, and is killed by PID when the test ends. Queries poll until the expected data appears or
a deadline passes: TensorBoard loads files asynchronously, so "not yet" is not a failure.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

LOADERS = ("false", "true")
STARTUP_DEADLINE = 60.0
DATA_DEADLINE = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TensorBoard:
    def __init__(self, logdir: str, load_fast: str) -> None:
        pytest.importorskip("tensorboard")
        self.port = _free_port()
        self.load_fast = load_fast
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tensorboard.main",
                "--logdir",
                logdir,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                f"--load_fast={load_fast}",
                "--reload_interval",
                "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        environment = self.wait_for(lambda: self.get_json("/data/environment"), STARTUP_DEADLINE)
        provider = environment["debug"]["data_provider"]
        expected = "GrpcDataProvider" if load_fast == "true" else "MultiplexerDataProvider"
        if not provider.startswith(expected):
            raise AssertionError(f"load_fast={load_fast} started {provider}")

    def url(self, path: str, **params: Any) -> str:
        query = urllib.parse.urlencode(params, doseq=True)
        return f"http://127.0.0.1:{self.port}{path}" + (f"?{query}" if query else "")

    def get(self, path: str, **params: Any) -> bytes:
        with urllib.request.urlopen(self.url(path, **params), timeout=10) as response:
            return bytes(response.read())

    def get_json(self, path: str, **params: Any) -> Any:
        return json.loads(self.get(path, **params))

    def post_form(self, path: str, fields: dict[str, Any]) -> Any:
        data = urllib.parse.urlencode(fields, doseq=True).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def wait_for(self, fetch: Callable[[], Any], deadline: float = DATA_DEADLINE) -> Any:
        """Call ``fetch`` until it returns something truthy without raising; return that."""
        end = time.monotonic() + deadline
        last_error: BaseException | None = None
        while time.monotonic() < end:
            if self.process.poll() is not None:
                err = (
                    self.process.stderr.read().decode(errors="replace")
                    if self.process.stderr
                    else ""
                )
                raise AssertionError(f"tensorboard exited with {self.process.returncode}: {err}")
            try:
                result = fetch()
                if result:
                    return result
            except (urllib.error.URLError, ConnectionError, KeyError, IndexError) as exc:
                last_error = exc
            time.sleep(0.25)  # polling interval, not a timing assertion
        raise AssertionError(f"no data from tensorboard within {deadline}s (last: {last_error!r})")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        if self.process.stderr:
            self.process.stderr.close()


@contextmanager
def tensorboard(logdir: str, load_fast: str) -> Iterator[TensorBoard]:
    server = TensorBoard(logdir, load_fast)
    try:
        yield server
    finally:
        server.stop()
