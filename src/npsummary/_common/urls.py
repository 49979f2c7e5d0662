"""Which logdirs are URLs (``s3://…``, ``memory://…``, chained ``a::b://…``), and the local path
of a ``file://`` one. Pure string rules: nothing here imports fsspec."""

from __future__ import annotations

import re

__all__ = ["is_url", "local_path"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*(::[A-Za-z][A-Za-z0-9+.\-]*)*://")
_LOCAL_PROTOCOLS = ("file", "local")


def is_url(logdir: object) -> bool:
    """Whether ``logdir`` is a string naming a URL (``s3://…``, ``memory://…``, ``file://…``)."""
    return isinstance(logdir, str) and _URL.match(logdir) is not None


def local_path(url: str) -> str | None:
    """The local path of a ``file://``/``local://`` URL, else None."""
    protocol, _, rest = url.partition("://")
    if protocol.lower() not in _LOCAL_PROTOCOLS:
        return None
    return rest or "."
