"""Which failures of a request to a store are tried again, how long to wait, and the error that
names the object when a request finally fails.

Tried again: throttling (S3's ``SlowDown``, ``Throttling``, HTTP 429), server errors (500, 502,
503, 504, ``InternalError``, ``ServiceUnavailable``, ``RequestTimeout``) and dropped or timed-out
connections, whether they arrive as botocore's error answers, as the ``OSError`` s3fs makes of
them (the answer kept as its cause), or as an HTTP library's exception carrying the status.
Never tried again: a missing object or bucket, a refusal, any other answer. Waits double from
``backoff`` up to ``max_backoff``, each drawn between half and all of that (jitter, so that
many requests throttled together do not come back together).
"""

from __future__ import annotations

import asyncio
import errno
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..._sinks.boto_s3 import error_codes, os_error
from .options import FetchOptions

__all__ = ["await_with_retries", "call_with_retries", "failure", "retryable"]

T = TypeVar("T")

_RETRIED_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TooManyRequests",
        "TooManyRequestsException",
        "ServiceUnavailable",
        "InternalError",
        "RequestTimeout",
        "429",
        "500",
        "502",
        "503",
        "504",
    }
)
#: Connection failures of botocore, aiohttp and fsspec, by class name (none need importing).
_RETRIED_TYPES = frozenset(
    {
        "EndpointConnectionError",
        "ConnectionClosedError",
        "ReadTimeoutError",
        "ConnectTimeoutError",
        "ResponseStreamingError",
        "IncompleteReadError",
        "ProxyConnectionError",
        "HTTPClientError",
        "ClientPayloadError",
        "ServerDisconnectedError",
        "ClientConnectorError",
        "ClientOSError",
        "FSTimeoutError",
    }
)
#: What s3fs makes of 503/SlowDown (EBUSY) and 500/InternalError (EREMOTEIO).
_RETRIED_ERRNOS = frozenset({errno.EBUSY, getattr(errno, "EREMOTEIO", 121), errno.ETIMEDOUT})
_FINAL_TYPES = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def _codes(exc: BaseException) -> set[str]:
    codes = error_codes(exc)
    for name in ("status", "code", "status_code"):
        value = getattr(exc, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            codes.add(str(value))
    return codes


def retryable(exc: BaseException) -> bool:
    """Whether a request that raised ``exc`` may succeed when tried again."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, _FINAL_TYPES):
            return False
        codes = _codes(current)
        if codes & _RETRIED_CODES:
            return True
        if error_codes(current):  # an answer, and not one of those
            return False
        if type(current).__name__ in _RETRIED_TYPES:
            return True
        if isinstance(current, (ConnectionError, TimeoutError, asyncio.TimeoutError)):
            return True
        if isinstance(current, OSError) and current.errno in _RETRIED_ERRNOS:
            return True
        current = current.__cause__ or current.__context__
    return False


def failure(exc: BaseException, url: str, attempts: int = 1) -> OSError:
    """``exc`` as an ``OSError`` naming ``url`` (and the attempts made, if more than one); a
    missing object stays a ``FileNotFoundError``, a refusal a ``PermissionError``."""
    tried = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
    if isinstance(exc, OSError):
        if url in str(exc) and not tried:
            return exc
        kind = type(exc) if isinstance(exc, _FINAL_TYPES) else OSError
        message = str(exc.strerror or exc)
        if url not in message:
            message = f"{url}: {message}"
        return kind(exc.errno or errno.EIO, f"{message}{tried}")
    if error_codes(exc):
        named = os_error(exc, url)
        return type(named)(named.errno, f"{named.strerror}{tried}")
    return OSError(errno.EIO, f"{url}: {type(exc).__name__}: {exc}{tried}")


def _delay(options: FetchOptions, attempt: int) -> float:
    ceiling = min(options.max_backoff, options.backoff * 2.0**attempt)
    return ceiling * (0.5 + 0.5 * random.random())


def call_with_retries(call: Callable[[], T], url: str, options: FetchOptions) -> T:
    """``call()``, tried up to ``options.attempts`` times while it fails retryably.

    Raises:
        OSError: the last failure, naming ``url`` (see :func:`failure`).
    """
    attempt = 1
    while True:
        try:
            return call()
        except Exception as exc:
            if attempt >= options.attempts or not retryable(exc):
                raise failure(exc, url, attempt) from exc
        time.sleep(_delay(options, attempt - 1))
        attempt += 1


async def await_with_retries(
    start: Callable[[], Awaitable[T]], url: str, options: FetchOptions
) -> T:
    """:func:`call_with_retries` for a coroutine: ``await start()``, waiting without blocking
    the event loop."""
    attempt = 1
    while True:
        try:
            return await start()
        except Exception as exc:
            if attempt >= options.attempts or not retryable(exc):
                raise failure(exc, url, attempt) from exc
        await asyncio.sleep(_delay(options, attempt - 1))
        attempt += 1
