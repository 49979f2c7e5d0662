"""Which failures of a store are tried again, and the error that names the object at the end."""

from __future__ import annotations

import asyncio
import errno

import pytest

from fakes3 import FakeClientError
from npsummary.reader._storage.options import FetchOptions
from npsummary.reader._storage.retry import (
    await_with_retries,
    call_with_retries,
    failure,
    retryable,
)

NOW = FetchOptions(attempts=4, backoff=0.0)


def _s3fs_style(code: str, status: int, number: int) -> OSError:
    """What s3fs raises for an answer: an OSError whose cause is botocore's error."""
    error = OSError(number, f"{code}: injected")
    error.__cause__ = FakeClientError(code, status, "GetObject")
    return error


class HttpError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code}")
        self.code = code


@pytest.mark.parametrize(
    "exc",
    [
        FakeClientError("SlowDown", 503, "GetObject"),
        FakeClientError("InternalError", 500, "GetObject"),
        FakeClientError("ThrottlingException", 400, "ListObjectsV2"),
        FakeClientError("Whatever", 502, "GetObject"),
        _s3fs_style("SlowDown", 503, errno.EBUSY),
        OSError(errno.EBUSY, "Please reduce your request rate."),
        ConnectionResetError(104, "reset"),
        TimeoutError("timed out"),
        HttpError(429),
        HttpError(503),
        type("EndpointConnectionError", (Exception,), {})("no route"),
    ],
)
def test_retried(exc: BaseException) -> None:
    assert retryable(exc)


@pytest.mark.parametrize(
    "exc",
    [
        FakeClientError("NoSuchKey", 404, "GetObject"),
        FakeClientError("AccessDenied", 403, "GetObject"),
        _s3fs_style("NoSuchKey", 404, errno.ENOENT),
        FileNotFoundError(2, "gone"),
        PermissionError(13, "no"),
        HttpError(404),
        ValueError("bad"),
    ],
)
def test_not_retried(exc: BaseException) -> None:
    assert not retryable(exc)


def test_tries_until_it_succeeds_then_gives_up_naming_the_object() -> None:
    answers: list[BaseException | bytes] = [FakeClientError("SlowDown", 503, "GetObject")] * 2
    answers.append(b"data")

    def call() -> bytes:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    assert call_with_retries(call, "s3://b/k", NOW) == b"data"

    def always() -> bytes:
        raise FakeClientError("SlowDown", 503, "GetObject")

    with pytest.raises(OSError, match=r"s3://b/k: .*SlowDown.*gave up after 4 attempts"):
        call_with_retries(always, "s3://b/k", NOW)


def test_a_final_answer_is_raised_at_once_with_its_kind() -> None:
    calls = []

    def missing() -> bytes:
        calls.append(1)
        raise FakeClientError("NoSuchKey", 404, "GetObject")

    with pytest.raises(FileNotFoundError, match="s3://b/k") as info:
        call_with_retries(missing, "s3://b/k", NOW)
    assert len(calls) == 1 and "attempts" not in str(info.value)
    assert isinstance(failure(PermissionError(13, "no"), "s3://b/k"), PermissionError)
    assert "s3://b/k" in str(failure(ValueError("odd"), "s3://b/k"))


def test_the_coroutine_form() -> None:
    tries = []

    async def flaky() -> bytes:
        tries.append(1)
        if len(tries) < 3:
            raise _s3fs_style("SlowDown", 503, errno.EBUSY)
        return b"ok"

    assert asyncio.run(await_with_retries(flaky, "gs://b/k", NOW)) == b"ok"

    async def down() -> bytes:
        raise ConnectionResetError(104, "reset")

    with pytest.raises(OSError, match=r"gs://b/k.*gave up after 4 attempts"):
        asyncio.run(await_with_retries(down, "gs://b/k", NOW))
