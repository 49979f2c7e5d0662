"""Segment names made to collide, as writers in two containers on one host make them: the same
PID, the same second and the same per-process counter (and, with :func:`colliding_names`, the
same random part for the first two writers), so that tests can check a taken name is never
replaced."""

from __future__ import annotations

import itertools
import os
import secrets
import time

import pytest

from npsummary._sinks import segment_state

__all__ = ["colliding_names", "same_pid_and_second"]


def same_pid_and_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every writer gets PID 1, the same second and counter 0."""
    # segment_state reads these through its os, time and secrets modules: patch the modules.
    monkeypatch.setattr(os, "getpid", lambda: 1)
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    monkeypatch.setattr(segment_state, "_next_counter", lambda: 0)


def colliding_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`same_pid_and_second`, and the first two writers draw the same random part: the
    second writer's first names are the first writer's; later draws differ."""
    same_pid_and_second(monkeypatch)
    tokens = itertools.chain(["a" * 16, "a" * 16], (f"{i:016x}" for i in itertools.count(1)))
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(tokens))
