"""SummaryWriter's tensorboardX and torch scalar forms through a real TensorBoard (both loaders):
``simple_value`` (with and without tensorboardX's titles) and torch's ``new_style`` float are
served by both; torch's ``double_precision`` scalar only by the Python loader
(``--load_fast=false``), as docs/MIGRATION.md states."""

from __future__ import annotations

import pytest

from npsummary import SummaryWriter
from tbserver import LOADERS, tensorboard

pytestmark = pytest.mark.live

WALL0 = 1_700_000_000.0
TAGS = {"plain", "titled", "new_style", "double"}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("live_tbx_forms")
    with SummaryWriter(str(root / "run")) as writer:
        for step in range(3):
            wall = WALL0 + step
            writer.add_scalar("plain", 0.5 * step, step, wall)
            writer.add_scalar("titled", 0.25 * step, step, wall, "Titled", "a *note*")
            writer.add_scalar("new_style", 2.0 * step, step, wall, new_style=True)
            writer.add_scalar("double", 0.1 * step, step, wall, True, True)  # torch positions
    return str(root)


@pytest.mark.parametrize("load_fast", LOADERS)
def test_every_form_is_served_except_double_by_the_rust_loader(logdir: str, load_fast: str) -> None:
    expected = TAGS if load_fast == "false" else TAGS - {"double"}
    with tensorboard(logdir, load_fast) as tb:

        def tags() -> set[str] | None:
            found = set(tb.get_json("/data/plugin/scalars/tags").get("run", {}))
            return found if found >= expected else None

        assert tb.wait_for(tags) == expected

        def series(tag: str) -> list[tuple[int, float]] | None:
            data = tb.get_json("/data/plugin/scalars/scalars", run="run", tag=tag)
            return [(int(p[1]), p[2]) for p in data] if len(data) == 3 else None

        assert tb.wait_for(lambda: series("plain")) == [(0, 0.0), (1, 0.5), (2, 1.0)]
        assert tb.wait_for(lambda: series("titled")) == [(0, 0.0), (1, 0.25), (2, 0.5)]
        assert tb.wait_for(lambda: series("new_style")) == [(0, 0.0), (1, 2.0), (2, 4.0)]
        if load_fast == "false":
            assert tb.wait_for(lambda: series("double")) == [(0, 0.0), (1, 0.1), (2, 0.2)]
