"""Where an install's server reads its pages: what setup is told, the copy it may hold, and
the setting that asks for the same again.

Three ways, chosen when setup runs:

- the Kinetis repository, read live (neither variable set);
- a directory read in place, `KINETIS_MCP_DOCS_PAGES=DIR`: the registered command carries
  `--docs-dir DIR`, so an edit shows at the next read, and the registration depends on DIR
  staying where it is;
- a copy the install holds, `KINETIS_MCP_DOCS_PAGES_COPY=DIR`: DIR's pages are copied into
  `INSTALL/pages` (`copies.mirror`), again at each setup and update while DIR is there, and
  `INSTALL/pages-source.json` records DIR. The registered command names no directory: the
  spawn entry serves the install's copy (`start.py`), so a client, the page read of
  `status` and the command a user runs by hand serve the same pages, and the install keeps
  serving its last pages when DIR moves or goes. The copy is the install's: every
  registration of it that names no directory serves it, and a setup for the Kinetis
  repository removes it.

Nothing of the copy is reached through a link (see `copies`); the record is written as the
other small files are.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InstallerError
from ..layout import InstallLayout
from ..names import (
    PAGES_COPY_ENVIRONMENT_VARIABLE,
    PAGES_ENVIRONMENT_VARIABLE,
)
from .copies import copied_names, discard_copy, mirror
from .files import read_regular, write_atomic
from .ownership import absolute

# The page setup's verification reads: a directory without it is no directory of pages.
INDEX_PAGE = "index.md"
PAGE_SUFFIX = ".md"
_RECORD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Pages:
    """Where pages come from: the Kinetis repository (no `directory`), a directory read in
    place, or (`held`) the install's copy of a directory."""

    directory: Path | None = None
    held: bool = False

    @property
    def variable(self) -> str | None:
        """The variable that asks setup for these pages; None for the Kinetis repository."""
        if self.directory is None:
            return None
        return PAGES_COPY_ENVIRONMENT_VARIABLE if self.held else PAGES_ENVIRONMENT_VARIABLE

    def setting(self) -> str | None:
        """`VARIABLE=DIR`, as a command a user runs gives it; None for the Kinetis repository."""
        if self.directory is None or self.variable is None:
            return None
        return f"{self.variable}={shlex.quote(os.fspath(self.directory))}"

    def session_arguments(self, checkout: Path | None) -> tuple[list[str], list[str]]:
        """What asks `nox -s setup_from_source` in `checkout` (None: any clone) for these
        pages: the words after `--`, and the settings before the session. The session holds
        a copy of the checkout's docs/ unless told `--live` (the Kinetis repository) or
        `--docs-in-place` (docs/ read in place); any other directory is named by its
        variable, which the session hands on to setup."""
        if self.directory is None:
            return ["--live"], []
        if checkout is not None and self.directory == checkout / "docs":
            return ([], []) if self.held else (["--docs-in-place"], [])
        setting = self.setting()
        return [], [] if setting is None else [setting]

    def describe(self, layout: InstallLayout) -> str:
        """Where the pages come from, for a line of setup or status."""
        if self.directory is None:
            return "the Kinetis repository"
        if self.held:
            return f"the install's copy of {self.directory} (in {layout.pages})"
        return os.fspath(self.directory)


def directory_setting(environ: Mapping[str, str], variable: str) -> Path | None:
    """`variable` of `environ` as an absolute directory holding the index page, or None.

    Unset or empty is None. Anything else that is not a directory with an `index.md` this
    user can read is refused, before anything is written.
    """
    configured = environ.get(variable, "")
    if not configured:
        return None
    pages = Path(absolute(configured))
    setting = f"{variable}={shlex.quote(configured)}"
    fix = (
        "point it at a directory of the documentation's pages (a checkout's docs/), or unset "
        "it to read them from the Kinetis repository. Nothing was written"
    )
    if not pages.is_dir():
        found = "does not exist" if not os.path.lexists(pages) else "is not a directory"
        raise InstallerError(f"{setting}: {pages} {found}; {fix}.")
    index = pages / INDEX_PAGE
    try:
        if not index.is_file():
            raise InstallerError(
                f"{setting}: {pages} has no {INDEX_PAGE}, the page setup's verification reads; "
                f"{fix}."
            )
        # A regular file, so opening it cannot block; the server would read it so.
        os.close(os.open(index, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as error:
        raise InstallerError(
            f"{setting}: {index} cannot be read ({error.strerror}); {fix}."
        ) from error
    return pages


def chosen_pages(environ: Mapping[str, str], layout: InstallLayout) -> Pages:
    """The pages `environ` asks setup for; `InstallerError` for a setting that names no
    directory of pages, or for both variables at once.

    A copy whose directory has gone since the install copied it keeps the copy it holds:
    the setting a fix names for such an install (`Pages.setting`) then still works.
    """
    live = environ.get(PAGES_ENVIRONMENT_VARIABLE, "")
    copied = environ.get(PAGES_COPY_ENVIRONMENT_VARIABLE, "")
    if live and copied:
        raise InstallerError(
            f"{PAGES_ENVIRONMENT_VARIABLE} (pages read in place) and "
            f"{PAGES_COPY_ENVIRONMENT_VARIABLE} (a copy the install holds) are both set; "
            "unset one of them. Nothing was written."
        )
    if copied:
        origin = Path(absolute(copied))
        if not os.path.lexists(origin) and held_pages(layout) == origin:
            return Pages(origin, held=True)
        return Pages(directory_setting(environ, PAGES_COPY_ENVIRONMENT_VARIABLE), held=True)
    return Pages(directory_setting(environ, PAGES_ENVIRONMENT_VARIABLE))


def holds_copy(layout: InstallLayout) -> bool:
    """Whether the install holds a copy of pages, as the spawn entry decides it: `pages` is
    a directory (never a link)."""
    try:
        return stat.S_ISDIR(layout.pages.lstat().st_mode)
    except OSError:
        return False


def held_pages(layout: InstallLayout) -> Path | None:
    """The directory the install's copy of the pages was made from; None when it holds
    none (or its record cannot be read, which a setup writes again)."""
    if not holds_copy(layout):
        return None
    data = read_regular(os.fspath(layout.pages_source), _RECORD_BYTES)
    try:
        origin = json.loads(data.decode("utf-8"))["copied_from"] if data else None
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(origin, str) or not Path(origin).is_absolute():
        return None
    return Path(origin)


def served_directory(registered: str | None, layout: InstallLayout) -> Path | None:
    """The directory a registration of `layout`'s install reads its pages from: its own
    `--docs-dir`, else the install's copy; None for the Kinetis repository."""
    if registered is not None:
        return Path(registered)
    return layout.pages if holds_copy(layout) else None


def registration_pages(registered: str | None, layout: InstallLayout) -> Pages:
    """The pages a registration of `layout`'s install serves, by its `--docs-dir`."""
    if registered is not None:
        return Pages(Path(registered))
    if not holds_copy(layout):
        return Pages()
    return Pages(held_pages(layout) or layout.pages, held=True)


def hold_pages(layout: InstallLayout, origin: Path) -> int:
    """Copy `origin`'s pages into the install and record where from; how many changed.
    An `origin` that has gone keeps the copy as it is (`chosen_pages`)."""
    if not origin.is_dir():
        return 0
    changed = mirror(origin, layout.pages, PAGE_SUFFIX)
    record = json.dumps({"copied_from": os.fspath(origin)}, indent=2) + "\n"
    try:
        write_atomic(os.fspath(layout.pages_source), record.encode())
    except OSError as error:
        raise InstallerError(
            f"Could not write {layout.pages_source} ({error.strerror or error})."
        ) from error
    return changed


def refresh_pages(layout: InstallLayout) -> tuple[Path, int] | None:
    """At an update: the copy refreshed from its directory while that still holds pages;
    the directory and how many pages changed, or None when there is nothing to refresh."""
    origin = held_pages(layout)
    if origin is None or INDEX_PAGE not in copied_names(origin, PAGE_SUFFIX):
        return None
    return origin, mirror(origin, layout.pages, PAGE_SUFFIX)


def drop_pages(layout: InstallLayout) -> Path | None:
    """Remove the install's copy of the pages and its record; the directory it was a copy
    of, or None when there was none."""
    origin = held_pages(layout)
    discard_copy(layout.pages, PAGE_SUFFIX)
    try:
        layout.pages_source.unlink(missing_ok=True)
    except OSError as error:
        raise InstallerError(
            f"Could not remove {layout.pages_source} ({error.strerror or error})."
        ) from error
    return origin
