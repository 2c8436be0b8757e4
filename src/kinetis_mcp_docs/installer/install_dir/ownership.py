"""Which directory an install lives in, and whether it is ours.

The directory is `KINETIS_MCP_DOCS_DIR`, or `~/.kinetis-mcp-docs` — the reference's default,
kept on Linux and macOS, where a dot-directory in the home is the convention for a tool's
own install (pipx, rustup, nvm do the same). Only Windows, which has a convention of its
own for per-user application data, gets a platformdirs location.

Ownership is the marker's content, never its name: the directory must be absent, empty,
or carry `.kinetis-mcp-docs` as a regular file holding exactly the one line setup writes.
`ownership` says which, or why the path is none of these, naming what it found. The home
directory is refused whatever it holds, even nothing: it holds the client's own files, and
the default install directory, whose name is the marker's. It only ever reads (`lstat`,
never following the marker), so a mistyped path — a home directory, a checkout — is left
exactly as it was. Setup refuses such a path (`safety.inspect_directory`), and so do
`update` and `uninstall` (`owned_install`). Ownership is not enough to write there: see
`safety`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import os
import pwd
import shlex
import stat
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InstallerError
from ..layout import (
    DIR_ENVIRONMENT_VARIABLE,
    MARKER_CONTENT,
    MARKER_NAME,
    InstallLayout,
)
from ..names import CURRENT_NAME, ENVS_NAME
from .files import describe

DEFAULT_DIRECTORY_NAME = ".kinetis-mcp-docs"
MARKER_BYTES = MARKER_CONTENT.encode()


class Found(enum.Enum):
    """What `ownership` found at an acceptable path."""

    ABSENT = "absent"
    EMPTY = "empty"
    OURS = "ours"


def resolve_directory(environ: Mapping[str, str] | None = None) -> Path:
    """The install directory as an absolute path: the variable, else the default.

    An empty variable counts as unset, as `${VAR:-default}` would treat it; one of only
    whitespace is refused, naming it: made absolute, it would name a directory called
    `   ` in whatever directory the command ran in. So is one holding a control character
    (a newline, a tab): no client registration can carry such a path whole, and so is
    the path it names once made absolute, or the default, when HOME or the working
    directory brings one in. `~` is expanded and a relative path made absolute, because the
    registered command must not depend on the directory setup ran from. The default is in
    HOME, which must then be an absolute path: a relative or empty HOME (which Python reads
    as `/`) names no home directory, and is refused rather than guessed at.
    """
    source = os.environ if environ is None else environ
    configured = source.get(DIR_ENVIRONMENT_VARIABLE, "")
    if configured and not configured.strip():
        raise InstallerError(
            f"{DIR_ENVIRONMENT_VARIABLE} is {configured!r}, only whitespace, which names no "
            "install directory; set it to the install directory, or unset it to use the "
            f"default, ~/{DEFAULT_DIRECTORY_NAME}. Nothing was written."
        )
    if _has_control_character(configured):
        raise InstallerError(
            f"{DIR_ENVIRONMENT_VARIABLE} is {configured!r}, which holds a control character "
            "that no registered command can carry; set it to the install directory, or unset "
            f"it to use the default, ~/{DEFAULT_DIRECTORY_NAME}. Nothing was written."
        )
    if configured:
        made = absolute(configured)
        if _has_control_character(made):  # from HOME (`~`) or the directory it ran in
            raise InstallerError(
                f"{DIR_ENVIRONMENT_VARIABLE} is {configured!r}, which names {made!r}, and that "
                "holds a control character (from HOME, or the directory setup ran in) that no "
                "registered command can carry; set it to an absolute install directory without "
                "one. Nothing was written."
            )
        return Path(made)
    if sys.platform == "win32":  # pragma: no cover - the installer targets POSIX
        import platformdirs  # noqa: PLC0415 - only Windows needs it

        return platformdirs.user_data_path("kinetis-mcp-docs", appauthor=False)
    home = os.environ.get("HOME")  # what Path.home() reads, and the password database if unset
    if home is not None and not Path(home).is_absolute():
        raise InstallerError(
            f"HOME is {home!r}, which is not an absolute path, so there is no default install "
            f"directory ({DEFAULT_DIRECTORY_NAME} in your home directory). Set HOME to your "
            f"home directory, or {DIR_ENVIRONMENT_VARIABLE} to the install directory. Nothing "
            "was written."
        )
    default = Path.home() / DEFAULT_DIRECTORY_NAME
    if _has_control_character(os.fspath(default)):
        raise InstallerError(
            f"The default install directory, {os.fspath(default)!r}, holds a control character "
            f"from HOME that no registered command can carry; set {DIR_ENVIRONMENT_VARIABLE} to "
            "an install directory without one. Nothing was written."
        )
    return default


def _has_control_character(text: str) -> bool:
    return any(unicodedata.category(character) == "Cc" for character in text)


def absolute(path: str) -> str:
    """`path` with `~` expanded, made absolute against this process's directory."""
    return os.path.abspath(os.path.expanduser(path))  # noqa: PTH100, PTH111


@dataclass(frozen=True)
class Refusal:
    """Why a path is not an install directory this installer may use, and the fix for it.

    `fix` is None when the usual one applies: point the variable somewhere else.
    `damaged` says the directory holds what setup writes (`envs`, `current`) without a
    marker that proves it ours: most likely an install whose marker was damaged or lost,
    which only deleting it and installing again mends (no command writes a marker into a
    directory holding files).
    """

    reason: str
    fix: str | None = None
    damaged: bool = False


def ownership(root: Path) -> Found | Refusal:
    """What is at `root`: absent, empty, ours (the marker) — or why it is none of these.

    Reads only: nothing under `root` is created, changed or followed (the marker is
    examined with `lstat`; a symlink is refused whatever it points at).
    """
    try:
        root.lstat()
    except FileNotFoundError:
        return Found.ABSENT
    except NotADirectoryError:
        return Refusal("a part of that path is a file, not a directory")
    except OSError as error:
        return Refusal(f"it cannot be examined ({error.strerror})")
    try:
        # A symlink to a directory is accepted as that directory, as a user who points
        # the variable through a link would expect; a dangling one is refused.
        mode = root.stat().st_mode
    except OSError:
        return Refusal("it is a symlink to nothing")
    if not stat.S_ISDIR(mode):
        return Refusal("it exists and is not a directory")
    if _is_home(root):
        # Whatever it holds, even nothing yet: the client's own files (`.claude.json`) live
        # there, and an install must be a directory it can remove whole.
        return _home_refusal(root)
    try:
        entries = sorted(entry.name for entry in root.iterdir())
    except OSError as error:
        return Refusal(f"it cannot be read ({error.strerror})")
    if not entries:
        return Found.EMPTY
    if MARKER_NAME in entries:
        refusal = _check_marker(root / MARKER_NAME)
    else:
        refusal = Refusal(
            f"it is not empty (it holds {_some(entries)}) and has no {MARKER_NAME} marker, "
            "so it is not an install of this tool"
        )
    if refusal is None:
        return Found.OURS
    if refusal.fix is None and {ENVS_NAME, CURRENT_NAME} & set(entries):
        return dataclasses.replace(refusal, damaged=True)
    return refusal


def owned_install(root: Path, verb: str) -> InstallLayout | None:
    """The install at `root`, None when nothing is installed there (absent or empty).

    Raises `InstallerError` — "Refusing to `verb` ..." — for a path that is not ours.
    """
    found = ownership(root)
    if isinstance(found, Refusal):
        raise refused(root, found, verb)
    return InstallLayout(root) if found is Found.OURS else None


def refused(root: Path, refusal: Refusal, verb: str) -> InstallerError:
    """The one-line refusal to `verb` ("install into", "update", "remove") the path `root`."""
    fix = refusal.fix or (
        f"set {DIR_ENVIRONMENT_VARIABLE} to an empty or new directory, or fix that path"
        if verb == "install into"
        else f"set {DIR_ENVIRONMENT_VARIABLE} to the install directory you mean"
    )
    if refusal.fix is None and refusal.damaged:
        # What setup writes is there: an install whose marker went, most likely. Setup
        # refuses it whatever is asked, so the fix is deleting it (the user's call).
        delete = f"delete it (`{delete_command(root)}`)"
        again = (
            f"{delete}; nothing else removes it"
            if verb == "remove"
            else f"{delete} and install again from a clone, as the README says"
        )
        fix = (
            f"if it is an install of this tool whose {MARKER_NAME} marker was damaged, and "
            f"nothing of yours is in it, {again}; otherwise {fix}"
        )
    return InstallerError(
        f"Refusing to {verb} {root}: {refusal.reason}. Nothing was changed there; {fix}."
    )


def delete_command(root: Path) -> str:
    """The command that deletes the install directory `root` whole, as a user types it."""
    return f"rm -rf -- {shlex.quote(os.fspath(root))}"


def _is_home(root: Path) -> bool:
    """Whether `root` is the home directory: `HOME`'s, or the password database's."""
    homes = [os.path.expanduser("~")]  # noqa: PTH111 - HOME, as Path.home() reads it
    with contextlib.suppress(KeyError):  # a uid with no entry
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    return any(_same(root, home) for home in homes if home)


def _same(root: Path, other: str) -> bool:
    try:
        return root.samefile(other)
    except OSError:  # no such directory to compare with
        return False


def _home_refusal(root: Path) -> Refusal:
    """Your home given as the install directory: say where the default one is."""
    default = root / DEFAULT_DIRECTORY_NAME
    # Its `.kinetis-mcp-docs` is the default install directory, or (a file) the marker an
    # earlier version wrote when it installed into the home directory itself.
    holds = f", which holds the default install directory, {default}" if default.is_dir() else ""
    return Refusal(
        f"it is your home directory{holds}; an install directory is a directory of its own",
        f"unset {DIR_ENVIRONMENT_VARIABLE} to use the default, {default}, or set it to a new "
        "directory",
    )


def _some(names: list[str], shown: int = 3) -> str:
    """A few of `names` for a message: `a, b, c and 4 more`."""
    listed = ", ".join(names[:shown])
    more = len(names) - shown
    return f"{listed} and {more} more" if more > 0 else listed


def _check_marker(marker: Path) -> Refusal | None:
    """Why `marker` is not the marker this tool writes; None when it is."""
    try:
        info = marker.lstat()
    except OSError as error:
        return Refusal(f"its {MARKER_NAME} marker cannot be examined ({error})")
    if stat.S_ISLNK(info.st_mode):
        return Refusal(f"its {MARKER_NAME} is a symlink, not the marker this tool writes")
    if stat.S_ISDIR(info.st_mode):
        # The marker's name is the default install directory's: this is likely a
        # directory holding an install rather than one.
        return Refusal(
            f"its {MARKER_NAME} is a directory, not the marker file this tool writes (an "
            "install directory inside it, perhaps)",
            f"set {DIR_ENVIRONMENT_VARIABLE} to {marker} if that is the install you mean, or "
            "to an empty or new directory",
        )
    if not stat.S_ISREG(info.st_mode):
        return Refusal(f"its {MARKER_NAME} is {describe(info.st_mode)}, not a regular file")
    try:
        with marker.open("rb") as file:
            # The file read must be the one examined: a swap for a symlink in between
            # shows as another inode.
            opened = os.fstat(file.fileno())
            content = file.read(len(MARKER_BYTES) + 1)
    except OSError as error:
        return Refusal(f"its {MARKER_NAME} marker cannot be read ({error})")
    if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
        return Refusal(f"its {MARKER_NAME} changed while it was being examined")
    if content != MARKER_BYTES:
        return Refusal(f"its {MARKER_NAME} does not hold the marker this tool writes")
    return None
