"""Where an install comes from: what setup records, and how an update applies it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.install_dir.package_source import (
    SOURCE_VARIABLES,
    PackageSource,
    read_source,
    record_source,
)
from kinetis_mcp_docs.installer.layout import InstallLayout


def test_the_source_is_the_pip_variables_that_choose_an_index_with_paths_made_absolute(
    tmp_path: Path,
) -> None:
    environ = {
        "PIP_FIND_LINKS": "build/wheelhouse file:///srv/wheels https://mirror.example/links",
        "PIP_NO_INDEX": "1",
        "PIP_CONFIG_FILE": "conf/pip.conf",
        "PIP_CERT": "/etc/ssl/ca.pem",
        "HOME": "/home/you",
    }

    source = PackageSource.of(environ, cwd=os.fspath(tmp_path))

    assert dict(source.variables) == {
        "PIP_FIND_LINKS": (
            f"{tmp_path / 'build' / 'wheelhouse'} file:///srv/wheels https://mirror.example/links"
        ),
        "PIP_NO_INDEX": "1",
        "PIP_CONFIG_FILE": os.fspath(tmp_path / "conf" / "pip.conf"),
    }


def test_an_update_sees_exactly_the_recorded_source_whatever_its_own_environment_says() -> None:
    source = PackageSource({"PIP_FIND_LINKS": "/checkout/build/wheelhouse", "PIP_NO_INDEX": "1"})
    environ = {"PIP_INDEX_URL": "https://elsewhere.example/simple", "PIP_CERT": "/ca.pem"}

    assert source.pip_environment(environ) == {
        "PIP_CERT": "/ca.pem",
        "PIP_FIND_LINKS": "/checkout/build/wheelhouse",
        "PIP_NO_INDEX": "1",
    }
    # Recorded as none: pip's own configuration, not the variables of whoever updates.
    assert PackageSource({}).pip_environment(environ) == {"PIP_CERT": "/ca.pem"}
    assert set(SOURCE_VARIABLES) >= {"PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX"}


def test_a_checkouts_wheelhouse_alone_makes_a_source_install(tmp_path: Path) -> None:
    checkout = tmp_path / "my projects" / "kinetis-mcp-docs"
    wheelhouse = (checkout / "build" / "wheelhouse").as_uri()

    assert PackageSource({"PIP_FIND_LINKS": wheelhouse, "PIP_NO_INDEX": "1"}).checkout() == (
        checkout
    )
    # With an index beside it, or another kind of directory, it is not.
    assert PackageSource({"PIP_FIND_LINKS": wheelhouse}).checkout() is None
    other = PackageSource({"PIP_FIND_LINKS": os.fspath(tmp_path), "PIP_NO_INDEX": "1"})
    assert other.checkout() is None


def test_wheelhouses_that_are_all_gone_are_told_apart_from_an_index(tmp_path: Path) -> None:
    gone = PackageSource({"PIP_FIND_LINKS": (tmp_path / "gone").as_uri(), "PIP_NO_INDEX": "yes"})
    assert gone.missing_wheelhouses()
    (tmp_path / "gone").mkdir()
    assert not gone.missing_wheelhouses()
    assert not PackageSource({"PIP_FIND_LINKS": os.fspath(tmp_path / "x")}).missing_wheelhouses()


@pytest.mark.parametrize(
    ("variables", "described"),
    [
        ({}, "the index pip's configuration names (PyPI, unless a pip.conf names another)"),
        (
            {"PIP_INDEX_URL": "https://user:s3cret@mirror.example/simple"},
            "the index https://***@mirror.example/simple",
        ),
        (
            {"PIP_FIND_LINKS": "file:///w", "PIP_NO_INDEX": "1"},
            "the wheelhouse file:///w, and no index",
        ),
        (
            {"PIP_EXTRA_INDEX_URL": "https://extra.example/simple", "PIP_FIND_LINKS": "/w"},
            (
                "the index pip's configuration names (PyPI, unless a pip.conf names another), the "
                "extra index https://extra.example/simple and the wheelhouse /w"
            ),
        ),
    ],
)
def test_the_source_is_described_without_credentials(
    variables: dict[str, str], described: str
) -> None:
    assert PackageSource(variables).describe() == described


def test_the_record_is_written_atomically_readable_by_its_owner_alone(tmp_path: Path) -> None:
    layout = InstallLayout(tmp_path)
    source = PackageSource({"PIP_INDEX_URL": "https://user:s3cret@mirror.example/simple"})

    record_source(layout, source)

    assert read_source(layout) == source
    assert stat.S_IMODE(layout.package_source.stat().st_mode) == 0o600
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["package-source.json"]


def test_an_install_without_a_record_has_no_source(tmp_path: Path) -> None:
    assert read_source(InstallLayout(tmp_path)) is None


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[]",
        b'{"pip_environment": {"PATH": "/bin"}}',
        b'{"pip_environment": {"PIP_NO_INDEX": 1}}',
    ],
)
def test_a_record_that_cannot_be_read_is_refused_rather_than_guessed_at(
    tmp_path: Path, content: bytes
) -> None:
    layout = InstallLayout(tmp_path)
    layout.package_source.write_bytes(content)

    with pytest.raises(InstallerError, match="run setup again"):
        read_source(layout)


def test_a_record_written_by_setup_is_plain_json_a_person_can_read(tmp_path: Path) -> None:
    layout = InstallLayout(tmp_path)
    record_source(layout, PackageSource({"PIP_NO_INDEX": "1"}))
    assert json.loads(layout.package_source.read_text()) == {
        "pip_environment": {"PIP_NO_INDEX": "1"}
    }
