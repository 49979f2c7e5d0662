"""The tests mirror the packages: a module's tests are found from its path.

``src/npsummary/_histogram/merge.py`` is tested in ``tests/histogram/`` (the package's name without
its underscore; ``reader/_storage`` becomes ``tests/reader/storage``). The other folders of
``tests/`` hold the tests that cut across packages, each named in ``CROSS_CUTTING``
(tests/README.md says what each holds).
"""

from __future__ import annotations

from pathlib import Path

from paths import ROOT, TESTS

PACKAGE = ROOT / "src" / "npsummary"
CROSS_CUTTING = {
    "conformance",
    "docs",
    "golden",
    "live",
    "package",
    "reliability",
    "support",
}


def mirror_of(package: Path) -> Path:
    """The test folder of a package folder below src/npsummary."""
    parts = package.relative_to(PACKAGE).parts
    return TESTS.joinpath(*(part.removeprefix("_") for part in parts))


def packages() -> list[Path]:
    return sorted(init.parent for init in PACKAGE.rglob("__init__.py") if init.parent != PACKAGE)


def test_every_package_has_a_test_folder_with_tests() -> None:
    missing = [
        str(package.relative_to(ROOT))
        for package in packages()
        if not any(mirror_of(package).glob("test_*.py"))
    ]
    assert not missing, f"packages without tests in their mirrored folder: {missing}"


def test_every_test_folder_mirrors_a_package_or_is_named_cross_cutting() -> None:
    mirrors = {mirror_of(package) for package in packages()}
    folders = {
        path.parent
        for path in TESTS.rglob("test_*.py")
        if path.parent.relative_to(TESTS).parts[0] not in CROSS_CUTTING
    }
    strays = sorted(str(folder.relative_to(TESTS)) for folder in folders - mirrors)
    assert not strays, f"test folders that mirror no package: {strays}"


def test_the_mirror_rule() -> None:
    assert mirror_of(PACKAGE / "_histogram") == TESTS / "histogram"
    assert mirror_of(PACKAGE / "reader" / "_storage") == TESTS / "reader" / "storage"
    assert mirror_of(PACKAGE / "_frontends" / "tbx") == TESTS / "frontends" / "tbx"
