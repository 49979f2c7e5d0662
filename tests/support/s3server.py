"""A real S3 endpoint on 127.0.0.1 for the remote tests: ``moto_server`` started and stopped by
PID, behind a small fault-injecting HTTP proxy.

Clients talk to the proxy. It forwards every request to moto unchanged and counts the bytes of
request bodies (what a client uploads), unless a fault is set:

* ``proxy.fail(status)``: write requests (PUT/POST) get an S3 error response with that status
  (500 InternalError, 503 SlowDown, 403 AccessDenied) without reaching moto;
* ``proxy.fail_reads(status, times, match)``: the next ``times`` GET requests whose path contains
  ``match`` get that error answer (503 SlowDown, 500 InternalError), then reads pass again;
* ``proxy.stop()`` / ``proxy.start()``: the endpoint goes away (connections refused) and comes
  back on the same port. moto keeps its objects in memory, so "the server stops and restarts" is
  played by the process in front of it, the part a client can see;
* ``latency``: seconds added to every request before it is forwarded (a store's round trip; the
  issue-30 benchmarks use 20 ms).

It also counts every request by method (``methods``) and the most requests it held at once
(``max_in_flight``), so tests can check how many requests a read made and that they overlapped.
Run as a program (``python s3server.py --upstream PORT --latency 0.02``) it serves in a process
of its own, as the benchmarks use it, and answers ``GET /__proxy__/stats`` (the counts as JSON)
and ``POST /__proxy__/reset``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

BUCKET = "npsummary-logs"
STARTUP_DEADLINE = 30.0
_ERROR_CODES = {403: "AccessDenied", 500: "InternalError", 503: "SlowDown"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None) -> None:
    end = time.monotonic() + STARTUP_DEADLINE
    while time.monotonic() < end:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"moto_server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)  # polling for the server to listen, not a timing assertion
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {STARTUP_DEADLINE}s")


class MotoServer:
    """``moto_server`` on 127.0.0.1, killed by PID (its process group) at :meth:`stop`."""

    def __init__(self) -> None:
        executable = shutil.which("moto_server", path=os.path.dirname(sys.executable))
        if executable is None:
            pytest.skip("moto_server is not installed (pip install 'moto[server]')")
        self._command = [executable, "-H", "127.0.0.1", "-p"]
        self.port = free_port()
        self.start()

    def start(self) -> None:
        """Start the server process (again, on the same port, with an empty store)."""
        self.process = subprocess.Popen(
            [*self._command, str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait_for_port(self.port, self.process)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0], 16)
                chunk = self.rfile.read(size)
                self.rfile.readline()
                chunks.append(line + chunk + b"\r\n")
                if size == 0:
                    # trailers until an empty line
                    while (trailer := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                        chunks.append(trailer)
                    chunks.append(b"\r\n")
                    return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _answer(self, status: int, payload: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _forward(self) -> None:
        proxy = self.server.proxy
        body = self._body()
        if self.path.startswith("/__proxy__/"):
            if self.path == "/__proxy__/reset":
                proxy.reset_counts()
            self._answer(200, json.dumps(proxy.stats()).encode())
            return
        proxy.enter(self.command)
        try:
            if proxy.latency:
                time.sleep(proxy.latency)  # the simulated round trip, not a test's timing
            self._relay(body)
        finally:
            proxy.leave()

    def _relay(self, body: bytes) -> None:
        proxy = self.server.proxy
        if self.command in ("PUT", "POST"):
            decoded = self.headers.get("X-Amz-Decoded-Content-Length")
            proxy.count(self.path, int(decoded) if decoded is not None else len(body))
        status = proxy.fault if self.command in ("PUT", "POST") else None
        if status is None and self.command == "GET":
            status = proxy.read_fault(self.path)
        if status is not None:
            code = _ERROR_CODES.get(status, "InternalError")
            payload = (
                f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                f"<Message>injected {status}</Message></Error>"
            ).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=60)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
            try:
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
            except OSError:  # moto itself is down: what a load balancer answers
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            # HEAD answers carry the object's length, not the (empty) body's.
            length = response.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            upstream.close()

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # many clients connecting at once (the default backlog is 5)
    proxy: FaultProxy

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.connections: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        super().process_request(request, client_address)

    def drop_connections(self) -> None:
        """Cut kept-alive client connections too: a stopped server answers nothing."""
        for connection in list(self.connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                connection.close()
        self.connections.clear()


class FaultProxy:
    """The fault-injecting proxy in front of moto (a thread of the test process)."""

    def __init__(self, upstream_port: int, latency: float = 0.0, port: int | None = None) -> None:
        self.upstream_port = upstream_port
        self.port = port or free_port()
        self.fault: int | None = None
        self.lock = threading.Lock()
        self.uploaded: dict[str, int] = {}  # body bytes per path, all requests added up
        self.puts: dict[str, int] = {}  # write requests per path
        self.requests = 0
        self.latency = latency
        self.methods: dict[str, int] = {}  # every request, by method
        self.in_flight = 0
        self.max_in_flight = 0
        self._read_faults: list[tuple[int, str]] = []  # (status, path substring), one per GET
        self._server: _ProxyServer | None = None
        self._thread: threading.Thread | None = None
        self.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def count(self, path: str, size: int) -> None:
        with self.lock:
            self.uploaded[path] = self.uploaded.get(path, 0) + size
            self.puts[path] = self.puts.get(path, 0) + 1
            self.requests += 1

    def uploaded_bytes(self) -> int:
        with self.lock:
            return sum(self.uploaded.values())

    def reset_counts(self) -> None:
        with self.lock:
            self.uploaded.clear()
            self.puts.clear()
            self.requests = 0
            self.methods.clear()
            self.max_in_flight = self.in_flight

    def enter(self, method: str) -> None:
        with self.lock:
            self.methods[method] = self.methods.get(method, 0) + 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def total(self) -> int:
        """Requests of every method since the last reset."""
        with self.lock:
            return sum(self.methods.values())

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "methods": dict(self.methods),
                "requests": sum(self.methods.values()),
                "max_in_flight": self.max_in_flight,
            }

    def fail_reads(self, status: int, times: int = 1, match: str = "") -> None:
        """The next ``times`` GETs whose path contains ``match`` answer ``status``."""
        with self.lock:
            self._read_faults.extend([(status, match)] * times)

    def read_fault(self, path: str) -> int | None:
        with self.lock:
            for i, (status, match) in enumerate(self._read_faults):
                if match in path:
                    del self._read_faults[i]
                    return status
        return None

    def fail(self, status: int | None) -> None:
        self.fault = status

    def heal(self) -> None:
        """No fault, and the endpoint up: the state each test starts from."""
        self.fail(None)
        with self.lock:
            self._read_faults.clear()
        if self._server is None:
            self.start()

    def start(self) -> None:
        server = _ProxyServer(("127.0.0.1", self.port), _Handler)
        server.proxy = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server.drop_connections()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None


def s3_environment(endpoint: str) -> dict[str, str]:
    """Variables pointing boto3, s3fs and TensorBoard at ``endpoint`` with dummy credentials."""
    return {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,  # boto3/botocore >= 1.31, so s3fs too
        "S3_ENDPOINT": endpoint,  # TensorBoard's S3 reader and tensorboardX's S3 writer
        "AWS_EC2_METADATA_DISABLED": "true",  # never look for an instance role off this machine
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_CONFIG_FILE": os.devnull,
    }


#: s3fs options for tests: one attempt per upload (npsummary retries), short timeouts.
FAST_FAIL = {
    "config_kwargs": {
        "retries": {"max_attempts": 1, "mode": "standard"},
        "connect_timeout": 2,
        "read_timeout": 10,
    },
}


@contextmanager
def _moto_stack(
    environment: Callable[[str], dict[str, str]], cleared: tuple[str, ...] = ()
) -> Iterator[tuple[MotoServer, FaultProxy]]:
    """moto behind the proxy, with the bucket made and the variables ``environment(endpoint of
    the proxy)`` set (``cleared`` unset) while the stack is up; both servers stopped by PID."""
    import boto3

    server = MotoServer()
    proxy = FaultProxy(server.port)
    variables = environment(proxy.endpoint)
    names = [*variables, *cleared]
    saved_env = {k: os.environ.get(k) for k in names}
    try:
        for name in names:
            os.environ.pop(name, None)
        os.environ.update(variables)
        boto3.client("s3", endpoint_url=server.endpoint).create_bucket(Bucket=BUCKET)
        yield server, proxy
    finally:
        proxy.stop()
        server.stop()
        _restore_environment(saved_env)


@contextmanager
def s3_stack() -> Iterator[tuple[MotoServer, FaultProxy]]:
    """moto behind the proxy, with the environment and fsspec configured to use them."""
    pytest.importorskip("s3fs", reason="the S3 tests need s3fs")
    pytest.importorskip("boto3", reason="the S3 tests need boto3")
    fsspec = pytest.importorskip("fsspec")
    import s3fs

    saved_conf = fsspec.config.conf.get("s3")
    saved_retries = s3fs.S3FileSystem.retries
    try:
        fsspec.config.conf["s3"] = FAST_FAIL
        # s3fs's own retry loop (class attribute, 5 with backoff): npsummary retries instead.
        s3fs.S3FileSystem.retries = 1
        with _moto_stack(s3_environment) as servers:
            yield servers
    finally:
        if saved_conf is None:
            fsspec.config.conf.pop("s3", None)
        else:
            fsspec.config.conf["s3"] = saved_conf
        s3fs.S3FileSystem.retries = saved_retries
        s3fs.S3FileSystem.clear_instance_cache()


def _restore_environment(saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def list_objects(endpoint: str, prefix: str) -> dict[str, bytes]:
    """Objects of the bucket under ``prefix`` (read from moto directly), by key."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    out: dict[str, bytes] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for item in page.get("Contents", []):
            body = client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
            out[item["Key"]] = body
    return out


def run_records(endpoint: str, prefix: str) -> list[bytes]:
    """The records of the event files directly under ``prefix`` (not its sub-runs or projector
    files), in object-name order, each file's version header left out (and checked)."""
    from npsummary._format.record import iter_records

    out: list[bytes] = []
    for key, data in sorted(list_objects(endpoint, prefix + "/").items()):
        if key.count("/") != prefix.count("/") + 1 or "tfevents" not in key:
            continue
        records = list(iter_records(data))
        assert b"brain.Event:2" in records[0], key
        out.extend(records[1:])
    return out


@contextmanager
def boto3_stack() -> Iterator[tuple[MotoServer, FaultProxy]]:
    """moto behind the proxy for the boto3 way (no s3fs): the endpoint given as ``S3_ENDPOINT``
    only (as tensorboardX and TensorBoard read it; ``AWS_ENDPOINT_URL`` unset, so the variable is
    what finds the server), one attempt per request (npsummary retries), s3fs hidden from
    imports while the stack is up (``sys.modules["s3fs"] = None``; child processes hide it
    themselves)."""
    pytest.importorskip("boto3", reason="S3 tests need boto3 (or s3fs) and moto[server]")
    pytest.importorskip("moto", reason="S3 tests need moto[server]")
    saved_s3fs = sys.modules.get("s3fs", _ABSENT)
    try:
        sys.modules["s3fs"] = None  # type: ignore[assignment]
        with _moto_stack(
            _boto3_environment, cleared=("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE")
        ) as servers:
            yield servers
    finally:
        if saved_s3fs is _ABSENT:
            sys.modules.pop("s3fs", None)
        else:
            sys.modules["s3fs"] = saved_s3fs


def _boto3_environment(endpoint: str) -> dict[str, str]:
    environment = s3_environment(endpoint)
    del environment["AWS_ENDPOINT_URL"]
    environment["AWS_MAX_ATTEMPTS"] = "1"
    environment["AWS_RETRY_MODE"] = "standard"
    return environment


_ABSENT: Any = object()

#: The first lines of a child process that must write with boto3 even where s3fs is installed.
HIDE_S3FS = "import sys\nsys.modules['s3fs'] = None\n"


def _serve() -> None:
    """The proxy in a process of its own, until it is killed (the benchmarks' way)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=int, required=True, help="moto_server's port")
    parser.add_argument("--port", type=int, default=0, help="the proxy's port (default: free)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    args = parser.parse_args()
    proxy = FaultProxy(args.upstream, args.latency, args.port or None)
    print(proxy.port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    _serve()
