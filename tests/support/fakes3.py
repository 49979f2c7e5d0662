"""An in-memory stand-in for a boto3 S3 client: the calls npsummary's boto3 path makes
(``put_object``, ``get_object``, ``head_object``, ``list_objects_v2`` and its paginator), with S3's
error answers (an exception carrying botocore's ``response`` dict).

It lets the boto3 path run where boto3 is not installed (the README's test command), and plays
what moto cannot: a store that honours ``If-None-Match``, one that ignores it (moto 4, some
S3-compatible servers), one that refuses it (501), a botocore that does not know it, and injected
failures. The real endpoints are tested in test_remote_boto3*.py against moto.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from typing import Any


class FakeClientError(Exception):
    """What botocore raises for an error answer: ``response`` holds its code and status."""

    def __init__(self, code: str, status: int, operation: str) -> None:
        super().__init__(f"An error occurred ({code}) when calling the {operation} operation")
        self.response = {
            "Error": {"Code": code, "Message": code},
            "ResponseMetadata": {"HTTPStatusCode": status},
        }


class _Shape:
    def __init__(self, members: dict[str, Any]) -> None:
        self.members = members


class _Meta:
    def __init__(self, store: FakeS3) -> None:
        self._store = store
        self.endpoint_url = "http://fake-s3"

    @property
    def service_model(self) -> _Meta:
        return self

    def operation_model(self, name: str) -> Any:
        members = {"Bucket": 1, "Key": 1, "Body": 1}
        if self._store.condition != "unknown":
            members["IfNoneMatch"] = 1
        return type("Operation", (), {"input_shape": _Shape(members)})()


class _Paginator:
    def __init__(self, store: FakeS3) -> None:
        self._store = store

    def paginate(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Two keys per page, so that paging is exercised."""
        token = None
        while True:
            page = self._store.list_objects_v2(MaxKeys=2, ContinuationToken=token, **kwargs)
            yield page
            token = page.get("NextContinuationToken")
            if not token:
                return


class FakeS3:
    """Buckets of objects in memory, shared by every client it hands out.

    ``condition`` is how a conditional put (``IfNoneMatch="*"``) is answered: ``"honoured"``
    (412 if the key exists), ``"ignored"`` (replaced anyway), ``"refused"`` (501 NotImplemented),
    or ``"unknown"`` (botocore does not offer the parameter). ``fail_puts`` makes every put answer
    that HTTP status; ``refuse_heads`` makes every HEAD answer 403.
    """

    def __init__(self, *buckets: str, condition: str = "honoured") -> None:
        self.buckets: dict[str, dict[str, bytes]] = {b: {} for b in buckets}
        self.condition = condition
        self.fail_puts: int | None = None
        self.refuse_heads = False
        self.puts = 0
        self.lock = threading.Lock()
        self.meta = _Meta(self)

    def _bucket(self, name: str, operation: str) -> dict[str, bytes]:
        bucket = self.buckets.get(name)
        if bucket is None:
            raise FakeClientError("NoSuchBucket", 404, operation)
        return bucket

    def put_object(self, Bucket: str, Key: str, Body: bytes, **kwargs: Any) -> dict[str, Any]:
        with self.lock:
            if self.fail_puts is not None:
                raise FakeClientError("InternalError", self.fail_puts, "PutObject")
            bucket = self._bucket(Bucket, "PutObject")
            if kwargs.get("IfNoneMatch") == "*":
                if self.condition == "refused":
                    raise FakeClientError("NotImplemented", 501, "PutObject")
                if self.condition == "honoured" and Key in bucket:
                    raise FakeClientError("PreconditionFailed", 412, "PutObject")
            bucket[Key] = bytes(Body)
            self.puts += 1
            return {}

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        with self.lock:
            data = self._bucket(Bucket, "GetObject").get(Key)
        if data is None:
            raise FakeClientError("NoSuchKey", 404, "GetObject")
        return {"Body": io.BytesIO(data), "ContentLength": len(data)}

    def head_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        if self.refuse_heads:
            raise FakeClientError("403", 403, "HeadObject")
        with self.lock:
            bucket = self.buckets.get(Bucket)
            data = None if bucket is None else bucket.get(Key)
        if data is None:  # a HEAD answer has no body: a missing bucket is a bare 404 too
            raise FakeClientError("404", 404, "HeadObject")
        return {"ContentLength": len(data)}

    def list_objects_v2(
        self,
        Bucket: str,
        Prefix: str = "",
        Delimiter: str = "",
        MaxKeys: int = 1000,
        ContinuationToken: str | None = None,
    ) -> dict[str, Any]:
        with self.lock:
            keys = sorted(k for k in self._bucket(Bucket, "ListObjectsV2") if k.startswith(Prefix))
            sizes = {k: len(self.buckets[Bucket][k]) for k in keys}
        entries: list[tuple[str, bool]] = []  # (key or common prefix, is a prefix)
        for key in keys:
            rest = key[len(Prefix) :]
            if Delimiter and Delimiter in rest:
                common = Prefix + rest.split(Delimiter)[0] + Delimiter
                if not entries or entries[-1] != (common, True):
                    entries.append((common, True))
            else:
                entries.append((key, False))
        start = int(ContinuationToken or 0)
        page = entries[start : start + MaxKeys]
        answer: dict[str, Any] = {
            "KeyCount": len(page),
            "Contents": [{"Key": k, "Size": sizes[k]} for k, p in page if not p],
            "CommonPrefixes": [{"Prefix": k} for k, p in page if p],
        }
        if start + MaxKeys < len(entries):
            answer["NextContinuationToken"] = str(start + MaxKeys)
        return answer

    def get_paginator(self, name: str) -> _Paginator:
        assert name == "list_objects_v2", name
        return _Paginator(self)
