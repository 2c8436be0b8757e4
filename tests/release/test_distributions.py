"""What a release publishes: the sdist and the wheel carry the licence, the package and its
type marker, name the licence in their metadata, and the sdist carries the docs, the tests
and everything the tests import.

The ordinary suite builds both archives the way `python -m build` does (the sdist from this
checkout, the wheel from the sdist) with the hatchling the test environment has. `nox -s
build` runs this module against the archives it is about to publish instead, naming their
directory in `KINETIS_TEST_DIST_DIR`.
"""

from __future__ import annotations

import email.message
import email.parser
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from tests.support.wheelhouse import PROJECT_ROOT, without_pip_configuration

DIST_DIR_VARIABLE = "KINETIS_TEST_DIST_DIR"
PACKAGE = "kinetis_mcp_docs"
# A build is bounded; one that hangs is a broken machine, not a slow one.
_BUILD_TIMEOUT_SECONDS = 300


@dataclass(frozen=True)
class Distributions:
    sdist: Path
    wheel: Path


@pytest.fixture(scope="module")
def distributions(tmp_path_factory: pytest.TempPathFactory) -> Distributions:
    """The sdist and the wheel under test: those in `KINETIS_TEST_DIST_DIR`, or built here."""
    given = os.environ.get(DIST_DIR_VARIABLE)
    if given:
        return _the_two_archives_in(Path(given))
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "hatchling", "build", "--target", "sdist", "-d", str(out)])
    (sdist,) = out.glob("*.tar.gz")
    # pip unpacks the sdist and builds the wheel from what it holds, so a file the sdist
    # leaves out that the wheel needs fails here, as it would for a user installing it.
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
    _run([*pip_wheel, "--no-build-isolation", "--wheel-dir", str(out), str(sdist)])
    return _the_two_archives_in(out)


def test_the_wheel_carries_every_module_of_the_package_and_its_type_marker(
    distributions: Distributions,
) -> None:
    shipped = set(_wheel_members(distributions.wheel))
    expected = {path.relative_to(PROJECT_ROOT / "src").as_posix() for path in _package_files()}
    assert f"{PACKAGE}/py.typed" in expected
    assert expected - shipped == set()


def test_the_sdist_carries_the_package_the_docs_the_tests_and_what_the_tests_import(
    distributions: Distributions,
) -> None:
    shipped = set(_sdist_members(distributions.sdist))
    expected = {
        path.relative_to(PROJECT_ROOT).as_posix()
        for path in [
            *_package_files(),
            *(PROJECT_ROOT / "docs").glob("*.md"),
            *_python_files_under("tests"),
            *_python_files_under("benchmarks"),
        ]
    }
    expected |= {"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "noxfile.py"}
    assert "docs/index.md" in expected
    assert expected - shipped == set()


def test_both_archives_carry_the_checkouts_licence_and_name_it_in_their_metadata(
    distributions: Distributions,
) -> None:
    licence = (PROJECT_ROOT / "LICENSE").read_bytes()
    wheel_metadata = _metadata(_wheel_file(distributions.wheel, "METADATA"))
    sdist_metadata = _metadata(_sdist_file(distributions.sdist, "PKG-INFO"))
    for metadata in (wheel_metadata, sdist_metadata):
        assert metadata["License-Expression"] == "MIT"
        assert metadata.get_all("License-File") == ["LICENSE"]
    assert _wheel_file(distributions.wheel, "licenses/LICENSE") == licence
    assert _sdist_file(distributions.sdist, "LICENSE") == licence


def test_the_licence_is_the_mit_licence_in_the_name_of_the_authors_the_metadata_names(
    distributions: Distributions,
) -> None:
    text = (PROJECT_ROOT / "LICENSE").read_text(encoding="utf-8")
    author = _metadata(_wheel_file(distributions.wheel, "METADATA"))["Author"]
    assert author == "The kinetis-mcp-docs authors"
    assert text.startswith("MIT License\n\n")
    assert re.search(rf"^Copyright \(c\) \d{{4}} {re.escape(author)}$", text, re.MULTILINE)
    assert "Permission is hereby granted, free of charge," in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_shipped_changelog_opens_with_unreleased_and_has_an_entry_for_this_version(
    distributions: Distributions,
) -> None:
    version = _metadata(_wheel_file(distributions.wheel, "METADATA"))["Version"]
    changelog = _sdist_file(distributions.sdist, "CHANGELOG.md").decode("utf-8")
    headings = re.findall(r"^## (.+)$", changelog, re.MULTILINE)
    assert headings[0] == "[Unreleased]"
    assert any(re.fullmatch(rf"\[{re.escape(version)}\] - \d{{4}}-\d\d-\d\d", h) for h in headings)


def _the_two_archives_in(directory: Path) -> Distributions:
    archives = sorted(path.name for path in directory.iterdir())
    sdists = [name for name in archives if name.endswith(".tar.gz")]
    wheels = [name for name in archives if name.endswith(".whl")]
    assert (len(sdists), len(wheels), len(archives)) == (1, 1, 2), archives
    return Distributions(sdist=directory / sdists[0], wheel=directory / wheels[0])


def _run(argv: list[str]) -> None:
    env = without_pip_configuration(os.environ) | {"PIP_NO_INDEX": "1"}
    done = subprocess.run(
        argv,
        cwd=PROJECT_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=_BUILD_TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"


def _package_files() -> list[Path]:
    root = PROJECT_ROOT / "src" / PACKAGE
    return [*_python_files_under(f"src/{PACKAGE}"), root / "py.typed"]


def _python_files_under(directory: str) -> list[Path]:
    return sorted((PROJECT_ROOT / directory).rglob("*.py"))


def _wheel_members(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _wheel_file(wheel: Path, name_in_dist_info: str) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        (member,) = (
            name
            for name in archive.namelist()
            if name.split("/", 1)[0].endswith(".dist-info")
            and _below_top(name) == name_in_dist_info
        )
        return archive.read(member)


def _sdist_members(sdist: Path) -> list[str]:
    """Member paths below the sdist's one top-level directory."""
    with tarfile.open(sdist) as archive:
        names = [member.name for member in archive.getmembers() if member.isfile()]
    assert len({name.split("/", 1)[0] for name in names}) == 1, "an sdist has one top directory"
    return [_below_top(name) for name in names]


def _sdist_file(sdist: Path, path: str) -> bytes:
    with tarfile.open(sdist) as archive:
        (member,) = (
            member
            for member in archive.getmembers()
            if member.isfile() and _below_top(member.name) == path
        )
        stream = archive.extractfile(member)
        assert stream is not None
        with stream:
            return stream.read()


def _below_top(name: str) -> str:
    """An archive member's path below its top directory (the sdist's, or the .dist-info)."""
    return PurePosixPath(*PurePosixPath(name).parts[1:]).as_posix()


def _metadata(raw: bytes) -> email.message.Message:
    return email.parser.BytesParser().parsebytes(raw)
