"""Where an install's packages come from: recorded by setup, used by every update.

pip decides where it looks from its variables (`PIP_INDEX_URL`, `PIP_FIND_LINKS`,
`PIP_NO_INDEX`, ...) and its configuration files. Setup runs with those of the shell it was
started from, but nothing else that updates the install does: Claude Code starts the server
with the environment it inherited (from a desktop launcher, say), Codex with a short list,
`kinetis-docs update` with those of whatever shell runs it. An install from a checkout's
wheelhouse (`nox -s setup_from_source`) then asked PyPI, which has no such package, at
every update. So setup records the variables that choose where pip looks
(`SOURCE_VARIABLES`) in `DIR/package-source.json`, and every update, a client start's and
the command's alike, runs pip with exactly those, whatever its own environment holds:
none recorded means pip's own configuration (PyPI, unless a configuration file under the
home directory names another index), which every one of them reads alike.

A source install updates from the install's own copy of its checkout's wheelhouse
(`wheelhouse.py`): the record then names the copy, and the wheelhouse it is copied from
(`copied_from`), which is also how the install knows its checkout.

Paths are recorded absolute, since an update runs in another directory than setup did.
The file is written as the other state files are (`files.write_atomic`), readable by its
owner alone: an index URL may carry a password. An install made before the record existed
has none, and its updates take pip's settings from the process updating it, as they did.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import InstallerError
from ..layout import InstallLayout
from .files import read_regular, write_atomic

# What chooses where pip looks for packages, and how it trusts an index: the variables
# recorded. A configuration file named by PIP_CONFIG_FILE is part of that choice.
SOURCE_VARIABLES = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_NO_INDEX",
    "PIP_TRUSTED_HOST",
    "PIP_CONFIG_FILE",
)
# pip splits these lists at whitespace; the entries that are not URLs are paths.
_PATH_LISTS = ("PIP_FIND_LINKS",)
_PATHS = ("PIP_CONFIG_FILE",)
_TRUE = frozenset({"1", "true", "yes", "on", "y"})
_MAX_BYTES = 64 * 1024
# A wheelhouse `nox -s setup_from_source` (or the by-hand steps of the setup page) builds:
# `<checkout>/build/wheelhouse`.
_CHECKOUT_WHEELHOUSE = ("build", "wheelhouse")
SOURCE_FILE_MODE = 0o600
# The record's member naming the checkout's wheelhouse the install's copy is made from.
_COPIED_FROM = "wheelhouse_copied_from"


@dataclass(frozen=True)
class PackageSource:
    """The pip variables an install was made with; empty: pip's own configuration.
    `copied_from`: the checkout's wheelhouse the install's copy, which pip reads, is made
    from (`wheelhouse.py`)."""

    variables: Mapping[str, str]
    copied_from: Path | None = None

    @classmethod
    def of(cls, environ: Mapping[str, str], cwd: str | None = None) -> PackageSource:
        """The source `environ` gives pip, its paths made absolute against `cwd`."""
        base = os.getcwd() if cwd is None else cwd  # noqa: PTH109 - paths here are strings
        found = {name: environ[name] for name in SOURCE_VARIABLES if name in environ}
        for name in _PATHS:
            if found.get(name):
                found[name] = _absolute(found[name], base)
        for name in _PATH_LISTS:
            if found.get(name):
                found[name] = " ".join(
                    entry if "://" in entry else _absolute(entry, base)
                    for entry in found[name].split()
                )
        return cls(found)

    def pip_environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """`environ` with its own source variables replaced by the recorded ones."""
        kept = {key: value for key, value in environ.items() if key not in SOURCE_VARIABLES}
        return kept | dict(self.variables)

    @property
    def indexes_off(self) -> bool:
        """Whether pip looks at no index at all, only at the recorded wheelhouses."""
        return self.variables.get("PIP_NO_INDEX", "").strip().lower() in _TRUE

    def wheelhouses(self) -> list[Path]:
        """The local directories (or `file://` URLs of them) pip is told to look in."""
        found = []
        for entry in self.variables.get("PIP_FIND_LINKS", "").split():
            if entry.startswith("file:"):
                found.append(Path(unquote(urlsplit(entry).path)))
            elif "://" not in entry:
                found.append(Path(entry))
        return found

    def checkout(self) -> Path | None:
        """The source checkout whose wheelhouse alone this install comes from, if any."""
        wheelhouse = self.checkout_wheelhouse()
        return None if wheelhouse is None else wheelhouse.parents[1]

    def checkout_wheelhouse(self) -> Path | None:
        """The checkout's wheelhouse (`CHECKOUT/build/wheelhouse`) this install comes from
        alone, whether pip reads it there or the install's copy of it; None if none."""
        if not self.indexes_off:
            return None
        for wheelhouse in [*([self.copied_from] if self.copied_from else []), *self.wheelhouses()]:
            if wheelhouse.parts[-2:] == _CHECKOUT_WHEELHOUSE:
                return wheelhouse
        return None

    def reading(self, copy: Path, origin: Path) -> PackageSource:
        """This source with pip reading `copy` where it read `origin`, recorded as copied
        from `origin`."""
        entries = self.variables.get("PIP_FIND_LINKS", "").split()
        replaced = [copy.as_uri() if _names(entry, origin) else entry for entry in entries]
        return PackageSource({**self.variables, "PIP_FIND_LINKS": " ".join(replaced)}, origin)

    def missing_wheelhouses(self) -> bool:
        """Whether pip is told to look at wheelhouses only, none of which exists."""
        houses = self.wheelhouses()
        return self.indexes_off and bool(houses) and not any(path.is_dir() for path in houses)

    def describe(self) -> str:
        """Where pip looks, for a line of status: URLs shown without their credentials."""
        houses = self._shown("PIP_FIND_LINKS")
        if self.indexes_off:
            copied = (
                ""
                if self.copied_from is None
                else f" (the install's copy of {self.copied_from}, refreshed from it at each "
                "setup and update while it is there)"
            )
            return f"the wheelhouse {houses or 'of nothing'}{copied}, and no index"
        index = self._shown("PIP_INDEX_URL")
        text = (
            f"the index {index}"
            if index
            else "the index pip's configuration names (PyPI, unless a pip.conf names another)"
        )
        extra = self._shown("PIP_EXTRA_INDEX_URL")
        if extra:
            text += f", the extra index {extra}"
        return f"{text} and the wheelhouse {houses}" if houses else text

    def _shown(self, name: str) -> str:
        entries = self.variables.get(name, "").split()
        return ", ".join(_without_credentials(entry) for entry in entries)


def record_source(layout: InstallLayout, source: PackageSource) -> None:
    """Write `source` into the install directory, atomically; `InstallerError` if it cannot."""
    record: dict[str, object] = {"pip_environment": dict(source.variables)}
    if source.copied_from is not None:
        record[_COPIED_FROM] = os.fspath(source.copied_from)
    data = json.dumps(record, indent=2) + "\n"
    try:
        write_atomic(os.fspath(layout.package_source), data.encode(), mode=SOURCE_FILE_MODE)
    except OSError as error:
        raise InstallerError(
            f"Could not write {layout.package_source} ({error.strerror or error})."
        ) from error


def read_source(layout: InstallLayout) -> PackageSource | None:
    """The recorded source; None when there is none (an install made before it existed).

    Raises `InstallerError` for a record that cannot be read as one: guessing where to
    install from could install from somewhere the user never chose.
    """
    path = layout.package_source
    if not os.path.lexists(path):
        return None
    data = read_regular(os.fspath(path), _MAX_BYTES)
    source = _source(data) if data is not None and len(data) <= _MAX_BYTES else None
    if source is None:
        raise InstallerError(
            f"{path}, where setup records the package index this install comes from, is "
            "unreadable; run setup again to record it."
        )
    return source


def _source(data: bytes) -> PackageSource | None:
    """The recorded source, or None when `data` is not a record of one."""
    try:
        document = json.loads(data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is a ValueError
        return None
    variables = document.get("pip_environment") if isinstance(document, dict) else None
    if not isinstance(variables, dict) or not all(
        key in SOURCE_VARIABLES and isinstance(value, str) for key, value in variables.items()
    ):
        return None
    copied_from = document.get(_COPIED_FROM)
    if copied_from is None:
        return PackageSource(variables)
    if not isinstance(copied_from, str) or not Path(copied_from).is_absolute():
        return None
    return PackageSource(variables, Path(copied_from))


def _names(entry: str, directory: Path) -> bool:
    """Whether the `PIP_FIND_LINKS` entry `entry` (a path or a `file:` URL) is `directory`."""
    if entry.startswith("file:"):
        return Path(unquote(urlsplit(entry).path)) == directory
    return "://" not in entry and Path(entry) == directory


def _absolute(path: str, base: str) -> str:
    return os.path.abspath(os.path.join(base, os.path.expanduser(path)))  # noqa: PTH100, PTH111, PTH118


def _without_credentials(url: str) -> str:
    """`url` with any user name and password replaced by `***`."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))
