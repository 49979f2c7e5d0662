"""An ``s3://`` run directory written through boto3, for programs that have boto3 but not s3fs
(tensorboardX's and TensorBoard's own S3 support need only boto3).

It offers what :class:`~npsummary._sinks.location.Location` offers (the segment sink and the
projector's files use either one alike) and stores the same objects under the same keys:

* the endpoint is ``S3_ENDPOINT`` when set, as tensorboardX and TensorBoard read it; otherwise
  boto3's own configuration decides (``AWS_ENDPOINT_URL``, profiles, the AWS default). Region and
  credentials come from boto3's usual chain;
* every object is written whole by one ``PutObject`` (an object store never shows part of one);
* :meth:`S3Location.put` never replaces another object: it asks for a conditional put
  (``If-None-Match: *``, where botocore knows it) after checking that the key is free, so stores
  that ignore the condition are still checked (not atomically there; names are unique anyway);
* boto3 is imported when the first such run is opened, never by ``import npsummary``; each run
  has its own client (created by the first call that needs it, again after ``fork()``), shared by
  its sub-runs and the projector's folders under it. A new client per run also means that a
  client never outlives the program's S3 configuration (or a test's mock of it); only the parsed
  service model is kept across runs.

Failures are ``OSError``s naming the object's URL: ``FileNotFoundError`` for a missing bucket or
key, ``PermissionError`` for a refusal, ``FileExistsError`` for a taken name, ``OSError`` else.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["S3Location", "connect", "error_codes", "list_directory", "os_error", "split_s3_url"]

#: S3 error codes and HTTP statuses read as "no such bucket or key".
_MISSING = frozenset({"NoSuchKey", "NoSuchBucket", "404", "NotFound"})
_REFUSED = frozenset({"AccessDenied", "403", "Forbidden", "InvalidAccessKeyId"})
#: The answers of a conditional put whose key is taken.
_TAKEN = frozenset({"PreconditionFailed", "412"})
#: Stores that refuse the If-None-Match header itself (then a plain put after the check).
_UNSUPPORTED = frozenset({"NotImplemented", "501"})


def split_s3_url(url: str) -> tuple[str, str]:
    """``(bucket, key prefix)`` of ``s3://bucket/some/prefix`` (the prefix without slashes at
    either end; "" for the bucket's top level).

    Raises:
      ValueError: no bucket is named.
    """
    rest = url.partition("://")[2]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise ValueError(f"logdir {url!r}: an s3:// URL names a bucket (s3://bucket/run)")
    return bucket, prefix.strip("/")


#: botocore's parsed service models, shared by the sessions of every run (a new session per run
#: keeps credentials and configuration fresh; parsing the S3 model again would cost ~0.3 s).
_LOADER: Any = None


def connect(pool: int | None = None) -> Any:
    """A new S3 client: ``S3_ENDPOINT`` if set (as tensorboardX and TensorBoard), else boto3's
    own configuration. Built on a session of its own (a session is not safe to share across
    threads); boto3's clients are botocore's, so botocore (installed with boto3) builds it.
    ``pool``: connections kept open at once (botocore's default is 10), for a caller that has
    more requests in flight (a client is safe to share across threads)."""
    global _LOADER
    import botocore.session

    session = botocore.session.get_session()
    if _LOADER is None:
        _LOADER = session.get_component("data_loader")
    else:
        session.register_component("data_loader", _LOADER)
    endpoint = os.environ.get("S3_ENDPOINT") or None
    if pool is None:
        return session.create_client("s3", endpoint_url=endpoint)
    from botocore.config import Config

    config = Config(max_pool_connections=pool)
    return session.create_client("s3", endpoint_url=endpoint, config=config)


class _Client:
    """The boto3 client of one run and its sub-runs; made on first use, dropped at fork."""

    __slots__ = ("client", "conditional")

    def __init__(self) -> None:
        self.client: Any = None
        self.conditional: bool | None = None  # whether to send If-None-Match on creates

    def get(self) -> Any:
        client = self.client
        if client is None:
            client = connect()
            self.client = client  # two threads may both build one: either is fine
        return client

    def can_create_exclusively(self, client: Any) -> bool:
        conditional = self.conditional
        if conditional is None:
            try:
                shape = client.meta.service_model.operation_model("PutObject").input_shape
                conditional = "IfNoneMatch" in shape.members
            except Exception:  # an unexpected botocore: fall back to the check alone
                conditional = False
            self.conditional = conditional
        return conditional


def error_codes(exc: BaseException) -> set[str]:
    """The S3 error code and HTTP status of a botocore error answer (empty for other errors)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return set()
    error = response.get("Error") or {}
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return {str(error.get("Code") or ""), str(status or "")} - {""}


def os_error(exc: BaseException, url: str) -> OSError:
    """``exc`` (a botocore error) as the OSError of the same meaning, naming ``url``."""
    codes = error_codes(exc)
    if codes & _MISSING:
        return FileNotFoundError(errno.ENOENT, f"{url}: {exc}")
    if codes & _REFUSED:
        return PermissionError(errno.EACCES, f"{url}: {exc}")
    if codes & _TAKEN:
        return FileExistsError(errno.EEXIST, f"{url}: {exc}")
    return OSError(errno.EIO, f"{url}: {exc}")


def list_directory(client: Any, bucket: str, prefix: str) -> Iterator[tuple[str, int | None]]:
    """The entries directly under the key ``prefix`` (no trailing ``/``; ``""``: the bucket's
    top): ``(name, size)`` for each object, ``(name, None)`` for each sub-directory (a common
    prefix), the folder's own marker object left out. botocore's errors pass through."""
    start = f"{prefix}/" if prefix else ""
    pages = client.get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=start, Delimiter="/"
    )
    for page in pages:
        for item in page.get("Contents") or ():
            name = str(item["Key"])[len(start) :]
            if name:
                yield name, int(item.get("Size") or 0)
        for common in page.get("CommonPrefixes") or ():
            name = str(common["Prefix"])[len(start) :].rstrip("/")
            if name:
                yield name, None


class S3Location:
    """A run directory ``s3://bucket/prefix`` written through boto3 (the interface of
    :class:`~npsummary._sinks.location.Location`)."""

    def __init__(self, url: str, *, _client: _Client | None = None) -> None:
        self.url = url.rstrip("/")
        self._bucket, self._prefix = split_s3_url(self.url)
        self._client = _client if _client is not None else _Client()

    def child(self, name: str) -> S3Location:
        return S3Location(f"{self.url}/{name}", _client=self._client)

    def url_of(self, name: str) -> str:
        return f"{self.url}/{name}"

    def _key(self, name: str) -> str:
        return f"{self._prefix}/{name}" if self._prefix else name

    def replace(self, name: str, data: bytes) -> None:
        """Write the object ``name`` holding ``data``, replacing this run's earlier version."""
        client = self._client.get()
        try:
            client.put_object(Bucket=self._bucket, Key=self._key(name), Body=data)
        except Exception as exc:
            raise os_error(exc, self.url_of(name)) from exc

    def read(self, name: str) -> bytes | None:
        """The bytes of the object ``name``, or None if there is none."""
        client = self._client.get()
        try:
            answer = client.get_object(Bucket=self._bucket, Key=self._key(name))
            return bytes(answer["Body"].read())
        except Exception as exc:
            error = os_error(exc, self.url_of(name))
            if isinstance(error, FileNotFoundError) and "NoSuchBucket" not in error_codes(exc):
                return None
            raise error from exc

    def names(self) -> list[str]:
        """The names of the objects directly in this directory, sorted ([] if it is missing)."""
        client = self._client.get()
        try:
            entries = list(list_directory(client, self._bucket, self._prefix))
        except Exception as exc:
            raise os_error(exc, self.url) from exc
        return sorted(name for name, size in entries if size is not None)

    def put(self, name: str, data: bytes) -> None:
        """Create the object ``name`` holding ``data``; never replace another one.

        Raises:
          FileExistsError: an object of that name with other bytes exists (it is left as is).
        """
        client = self._client.get()
        key = self._key(name)
        try:
            if self._exists(client, key):
                raise FileExistsError(errno.EEXIST, "exists")
            self._create(client, key, data)
        except FileExistsError:
            if self._holds(client, key, data):
                return  # our own earlier attempt, whose answer was lost: already uploaded
            raise FileExistsError(
                errno.EEXIST,
                f"{self.url_of(name)} already exists: another writer's object, not replaced",
            ) from None
        except OSError:
            raise
        except Exception as exc:
            raise os_error(exc, self.url_of(name)) from exc

    def _exists(self, client: Any, key: str) -> bool:
        try:
            client.head_object(Bucket=self._bucket, Key=key)
        except Exception as exc:
            codes = error_codes(exc)
            if codes & _MISSING and "NoSuchBucket" not in codes:
                return False
            if codes & _REFUSED:  # write-only credentials: the conditional put still guards
                return False
            raise
        return True

    def _create(self, client: Any, key: str, data: bytes) -> None:
        if self._client.can_create_exclusively(client):
            try:
                client.put_object(Bucket=self._bucket, Key=key, Body=data, IfNoneMatch="*")
                return
            except Exception as exc:
                codes = error_codes(exc)
                if codes & _TAKEN:
                    raise FileExistsError(errno.EEXIST, "exists") from exc
                if not codes & _UNSUPPORTED:
                    raise
                self._client.conditional = False  # checked above: a plain put follows
        client.put_object(Bucket=self._bucket, Key=key, Body=data)

    def _holds(self, client: Any, key: str, data: bytes) -> bool:
        try:
            head = client.head_object(Bucket=self._bucket, Key=key)
            if int(head.get("ContentLength", -1)) != len(data):
                return False
            body = client.get_object(Bucket=self._bucket, Key=key)["Body"].read()
            return bytes(body) == data
        except Exception:
            return False

    def reset_after_fork(self) -> None:
        self._client.client = None
