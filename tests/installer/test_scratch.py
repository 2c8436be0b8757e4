"""The install directory's temporary directory: emptied before each build, removed with
the install, never followed through a link."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.install_dir.removal import remove_install
from kinetis_mcp_docs.installer.install_dir.scratch import SCRATCH_MODE, emptied_scratch
from kinetis_mcp_docs.installer.layout import MARKER_CONTENT, InstallLayout

pytestmark = pytest.mark.interpreter  # venv and pip as each interpreter ships them


@pytest.fixture
def layout(tmp_path: Path) -> InstallLayout:
    """An install directory whose last pip was killed mid-download."""
    layout = InstallLayout(tmp_path / "install")
    layout.root.mkdir()
    layout.marker.write_text(MARKER_CONTENT)
    layout.lock.write_text("")
    unpack = layout.scratch / "pip-unpack-k3j2h1" / "kinetis_mcp_docs-1.0.1-py3-none-any.whl"
    unpack.parent.mkdir(parents=True)
    unpack.write_bytes(b"PK\x03\x04 the first bytes")
    (layout.scratch / "kinetis-update-a8c2" / "report.json").parent.mkdir()
    return layout


def test_a_build_starts_from_an_empty_private_scratch_whatever_the_last_one_left(
    layout: InstallLayout,
) -> None:
    scratch = emptied_scratch(layout)

    assert scratch == layout.scratch
    assert list(scratch.iterdir()) == []
    assert stat.S_IMODE(scratch.stat().st_mode) == SCRATCH_MODE == 0o700


def test_a_scratch_that_is_a_link_goes_and_what_it_points_at_stays(
    layout: InstallLayout, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("a user's file\n")
    shutil.rmtree(layout.scratch)
    layout.scratch.symlink_to(elsewhere)

    scratch = emptied_scratch(layout)

    assert not scratch.is_symlink()
    assert list(scratch.iterdir()) == []
    assert (elsewhere / "keep.txt").read_text() == "a user's file\n"


@pytest.fixture
def immutable(layout: InstallLayout) -> Iterator[Path]:
    """A file in the scratch that not even its owner may remove (`chattr +i`)."""
    stuck = layout.scratch / "pip-unpack-k3j2h1" / "kinetis_mcp_docs-1.0.1-py3-none-any.whl"
    try:
        subprocess.run(["chattr", "+i", os.fspath(stuck)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"chattr +i is not available here ({error})")
    yield stuck
    subprocess.run(["chattr", "-i", os.fspath(stuck)], check=True, capture_output=True)


def test_a_scratch_that_cannot_be_emptied_is_one_error_naming_what_stayed(
    layout: InstallLayout, immutable: Path
) -> None:
    with pytest.raises(InstallerError) as failure:
        emptied_scratch(layout)

    assert failure.value.message == (
        f"Could not empty {layout.scratch} (Operation not permitted); remove it and try again."
    )
    assert immutable.exists()


def test_uninstall_removes_the_scratch_with_what_a_killed_pip_left_in_it(
    layout: InstallLayout,
) -> None:
    assert remove_install(layout) == []

    assert not layout.root.exists()


# In a user namespace of its own, as an unprivileged user who owns the test's files (and
# has no capability): what a user's own update meets, whoever runs the tests, root included.
_AS_OWNER = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
_DISCARD = (
    "import sys; from pathlib import Path; "
    "from kinetis_mcp_docs.installer.install_dir.scratch import discard_scratch; "
    "from kinetis_mcp_docs.installer.layout import InstallLayout; "
    "discard_scratch(InstallLayout(Path(sys.argv[1])))"
)


@pytest.fixture
def sealed_scratch(tmp_path: Path) -> Iterator[InstallLayout]:
    """An install directory whose scratch holds read-only directories (one that cannot
    even be listed), as a killed tool can leave them."""
    try:
        probe = subprocess.run(
            [*_AS_OWNER, sys.executable, "-c", "import kinetis_mcp_docs"],
            capture_output=True,
            check=False,
        )
    except OSError as error:
        pytest.skip(f"unshare is not available here ({error})")
    if probe.returncode != 0:
        pytest.skip(f"no user namespace can run this interpreter here: {probe.stderr!r}")
    layout = InstallLayout(tmp_path / "install")
    tree = layout.scratch / "pip-build" / "pkg"
    tree.mkdir(parents=True)
    (tree / "module.py").write_text("x = 1\n")
    (layout.scratch / "sealed").mkdir()
    (layout.scratch / "sealed" / "inside.txt").write_text("")
    tree.chmod(0o555)
    tree.parent.chmod(0o555)
    (layout.scratch / "sealed").chmod(0o000)
    yield layout
    subprocess.run(["chmod", "-R", "u+rwx", os.fspath(tmp_path)], check=False)


def test_a_scratch_holding_read_only_directories_is_emptied_by_its_owner(
    sealed_scratch: InstallLayout,
) -> None:
    # Such a tree made every update fail, and the fix it named, `rm -rf`, failed too.
    refused = subprocess.run(
        [*_AS_OWNER, "rm", "-rf", os.fspath(sealed_scratch.scratch / "pip-build")],
        capture_output=True,
        check=False,
    )
    assert refused.returncode != 0  # what the owner meets by hand

    discarded = subprocess.run(
        [*_AS_OWNER, sys.executable, "-c", _DISCARD, os.fspath(sealed_scratch.root)],
        capture_output=True,
        text=True,
        check=False,
    )

    assert discarded.returncode == 0, discarded.stderr
    assert not sealed_scratch.scratch.exists()
