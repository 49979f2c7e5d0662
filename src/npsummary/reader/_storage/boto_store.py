"""The reader's :class:`~npsummary.reader.FileSystem` for ``s3://`` URLs through boto3, used where
s3fs is missing and boto3 is installed (the rule of
:func:`npsummary._sinks.location.open_location`, so what npsummary writes with boto3 it reads back
the same way), and its :class:`~.store.ObjectStore`: a sweep listed by ``ListObjectsV2`` without
delimiter (1,000 keys a page, each page tried again on throttling) and fetched by a pool of
threads sharing one client whose connection pool is as large as the concurrency.

Paths stay URLs, as with fsspec. Objects are streamed: each file is one ``GetObject`` whose body is
read a chunk at a time by the reader, so no more than one chunk is held. A directory's listing is
fetched once per read (``ListObjectsV2`` with ``/`` as delimiter) and answers ``isdir``/``size``
for its entries. Failures are the OSErrors of :mod:`npsummary._sinks.boto_s3`.
"""

from __future__ import annotations

import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO, cast

from ..._sinks import boto_s3
from ..._sinks.boto_s3 import list_directory, os_error, split_s3_url
from .options import FetchOptions
from .retry import call_with_retries

__all__ = ["BotoS3FileSystem", "BotoS3Store"]


class BotoS3FileSystem:
    """The objects under ``root`` (an ``s3://`` URL), read through one boto3 client."""

    def __init__(self, root: str) -> None:
        self._root = root.rstrip("/") or root
        split_s3_url(self._root)  # a ValueError for a URL without a bucket
        self._client: Any = boto_s3.connect()
        self._sizes: dict[str, int] = {}  # URL -> size, for the objects listed so far
        self._dirs: set[str] = set()  # URLs known to be directories

    def _where(self, url: str) -> tuple[str, str]:
        bucket, key = split_s3_url(url.rstrip("/"))
        return bucket, key

    def open(self, path: str) -> BinaryIO:
        bucket, key = self._where(path)
        try:
            answer = self._client.get_object(Bucket=bucket, Key=key)
        except Exception as exc:
            raise os_error(exc, path) from exc
        return cast(BinaryIO, _Body(answer["Body"], path))

    def listdir(self, path: str) -> list[str]:
        url = path.rstrip("/")
        bucket, prefix = self._where(url)
        start = f"{prefix}/" if prefix else ""
        names: list[str] = []
        try:
            for name, size in list_directory(self._client, bucket, prefix):
                if size is None:
                    self._dirs.add(f"{url}/{name}")
                else:
                    self._sizes[f"{url}/{name}"] = size
                names.append(name)
        except Exception as exc:
            raise os_error(exc, url) from exc
        if not names and prefix and not self._exists_below(bucket, start):
            raise FileNotFoundError(2, "no such directory", url)
        self._dirs.add(url)
        return names

    def _exists_below(self, bucket: str, start: str) -> bool:
        try:
            answer = self._client.list_objects_v2(Bucket=bucket, Prefix=start, MaxKeys=1)
        except Exception as exc:
            raise os_error(exc, f"s3://{bucket}/{start}") from exc
        return bool(answer.get("KeyCount") or answer.get("Contents"))

    def isdir(self, path: str) -> bool:
        url = path.rstrip("/")
        if url in self._dirs:
            return True
        if url in self._sizes:
            return False
        bucket, prefix = self._where(url)
        if not prefix:  # the bucket itself
            self._dirs.add(url)
            return True
        if self._exists_below(bucket, f"{prefix}/"):
            self._dirs.add(url)
            return True
        return False

    def size(self, path: str) -> int:
        url = path.rstrip("/")
        size = self._sizes.get(url)
        if size is not None:
            return size
        if url in self._dirs:
            raise IsADirectoryError(21, "is a directory", path)
        bucket, key = self._where(url)
        if not key:
            raise IsADirectoryError(21, "is a directory", path)
        try:
            head = self._client.head_object(Bucket=bucket, Key=key)
        except Exception as exc:
            raise os_error(exc, path) from exc
        size = int(head.get("ContentLength") or 0)
        self._sizes[url] = size
        return size

    def join(self, *parts: str) -> str:
        return "/".join(p.rstrip("/") for p in parts[:-1]) + "/" + parts[-1].lstrip("/")

    def object_store(self, path: str, options: FetchOptions) -> BotoS3Store:
        """The objects under ``path``, listed recursively and fetched concurrently."""
        return BotoS3Store(path, options)


class BotoS3Store:
    """The objects under ``url`` (``s3://bucket/prefix``), through a client of their own."""

    def __init__(self, url: str, options: FetchOptions) -> None:
        self._url = url.rstrip("/") or url
        self._bucket, self._prefix = split_s3_url(self._url)
        self._options = options
        self._client: Any = boto_s3.connect(pool=options.concurrency)
        self._pool = ThreadPoolExecutor(options.concurrency, thread_name_prefix="npsummary-s3")
        self._finalizer = weakref.finalize(self, self._pool.shutdown, False, cancel_futures=True)

    def list_tree(self) -> list[tuple[str, int]]:
        start = f"{self._prefix}/" if self._prefix else ""
        out: list[tuple[str, int]] = []
        token: str | None = None
        while True:
            request: dict[str, Any] = {"Bucket": self._bucket, "Prefix": start}
            if token:
                request["ContinuationToken"] = token

            def page(request: dict[str, Any] = request) -> Any:
                return self._client.list_objects_v2(**request)

            answer = call_with_retries(page, self._url, self._options)
            for item in answer.get("Contents") or ():
                name = str(item["Key"])[len(start) :]
                if name and not name.endswith("/"):
                    out.append((f"{self._url}/{name}", int(item.get("Size") or 0)))
            token = answer.get("NextContinuationToken")
            if not token:
                return out

    def fetch(self, url: str) -> Future[bytes]:
        if url.startswith(self._url + "/"):
            key = (f"{self._prefix}/" if self._prefix else "") + url[len(self._url) + 1 :]
        else:
            key = split_s3_url(url)[1]
        return self._pool.submit(call_with_retries, lambda: self._get(key), url, self._options)

    def _get(self, key: str) -> bytes:
        body = self._client.get_object(Bucket=self._bucket, Key=key)["Body"]
        try:
            return bytes(body.read())
        finally:
            body.close()

    def close(self) -> None:
        self._finalizer()


class _Body:
    """An object's streamed body as a file the reader reads in order and closes."""

    def __init__(self, body: Any, url: str) -> None:
        self._body = body
        self._url = url

    def read(self, size: int = -1) -> bytes:
        try:
            data = self._body.read(size if size >= 0 else None)
        except Exception as exc:
            raise os_error(exc, self._url) from exc
        return bytes(data)

    def close(self) -> None:
        self._body.close()

    def __enter__(self) -> _Body:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
