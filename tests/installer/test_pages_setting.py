"""`KINETIS_MCP_DOCS_PAGES` as setup reads it among its prerequisites, before anything is
written: a directory holding an `index.md` this user can read, or one line saying what is
wrong. Permissions are a fake file system's, as an ordinary user: root reads any file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.helpers import set_uid

from kinetis_mcp_docs.installer.commands.setup import pages_directory
from kinetis_mcp_docs.installer.errors import InstallerError

FIX = (
    "point it at a directory of the documentation's pages (a checkout's docs/), or unset it to "
    "read them from the Kinetis repository. Nothing was written."
)


def test_a_readable_directory_with_its_index_page_is_the_pages_directory(
    fs: FakeFilesystem,
) -> None:
    fs.create_file("/srv/pages/index.md", contents="# Kinetis\n")
    set_uid(1000)

    assert pages_directory({"KINETIS_MCP_DOCS_PAGES": "/srv/pages"}) == Path("/srv/pages")


@pytest.mark.parametrize(
    "unreadable",
    [
        # Once `Permission denied (/srv/pages/index.md).`: no setting, no fix, no word of
        # what was written.
        "/srv/pages",
        # Once accepted: setup went on to claim the install directory and run pip.
        "/srv/pages/index.md",
    ],
)
def test_pages_this_user_cannot_read_are_refused_naming_the_setting(
    fs: FakeFilesystem, unreadable: str
) -> None:
    fs.create_file("/srv/pages/index.md", contents="# Kinetis\n")
    fs.chmod(unreadable, 0o000)
    set_uid(1000)

    with pytest.raises(InstallerError) as refused:
        pages_directory({"KINETIS_MCP_DOCS_PAGES": "/srv/pages"})

    assert refused.value.message == (
        "KINETIS_MCP_DOCS_PAGES=/srv/pages: /srv/pages/index.md cannot be read "
        f"(Permission denied); {FIX}"
    )
