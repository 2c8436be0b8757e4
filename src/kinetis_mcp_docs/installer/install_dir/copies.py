"""The copies an install holds of directories outside it (its pages, a source install's
wheelhouse), so that it keeps serving and updating when those move or go.

A copy is a directory of the install directory holding exactly the regular files of its
origin whose names end in one suffix (`.md`, `.whl`): `mirror` makes it so, each file
replaced in one rename (a server reading a page, or pip a wheel, meanwhile sees it whole,
old or new) and each file left out of the origin removed; a file whose size and time are
the origin's is not copied again. The copy is never reached through a link: a link, or
anything but a directory, under its name is refused by `safety` before anything is
written. `discard_copy` removes only what `mirror` writes, so what a user put there stays,
and is named, as uninstall names anything it did not write.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

from ..errors import InstallerError
from ..layout import DIRECTORY_MODE
from .files import FILE_MODE

# A file being copied in, named so that a killed copy's leftover is recognised as ours.
_PARTIAL = ".partial-"
_PARTIAL_NAME = re.compile(r"\..+\.partial-[0-9a-f]{8}")
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def copied_names(directory: Path, suffix: str, *, held: bool = False) -> list[str]:
    """The names of the regular files of `directory` ending in `suffix`. In an origin (the
    user's directory) links to regular files count, read as the server would read them; in
    a copy the install `held`, nothing is followed through a link, the copy itself included."""
    try:
        if held and not stat.S_ISDIR(directory.lstat().st_mode):
            return []
        names = sorted(os.listdir(directory))  # noqa: PTH208 - names are compared
    except OSError:
        return []
    return [
        name
        for name in names
        if name.endswith(suffix) and _regular(directory / name, follow=not held)
    ]


def _regular(path: Path, *, follow: bool) -> bool:
    try:
        return stat.S_ISREG((path.stat() if follow else path.lstat()).st_mode)
    except OSError:
        return False


def mirror(origin: Path, copy: Path, suffix: str) -> int:
    """Make `copy` hold exactly the files of `origin` ending in `suffix`; how many changed.

    Raises `InstallerError` naming the file that could not be read or written.
    """
    wanted = copied_names(origin, suffix)
    try:
        copy.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
        if not stat.S_ISDIR(copy.lstat().st_mode):  # never written through a link
            raise InstallerError(f"{copy} is not a directory; move it out of the way.")
    except OSError as error:
        raise InstallerError(f"Could not create {copy} ({error.strerror or error}).") from error
    changed = 0
    for name in wanted:
        if _copy_file(origin / name, copy / name):
            changed += 1
    for name in set(copied_names(copy, suffix, held=True)) - set(wanted):
        _unlink(copy / name)
        changed += 1
    for name in os.listdir(copy):  # noqa: PTH208 - names are compared
        if _PARTIAL_NAME.fullmatch(name):
            _unlink(copy / name)  # what a killed copy left
    return changed


def _copy_file(source: Path, target: Path) -> bool:
    """Copy `source` over `target` in one rename, unless it already is the same; whether
    it was copied."""
    try:
        read = source.stat()
        try:
            held = target.lstat()
        except FileNotFoundError:
            held = None
        if (
            held is not None
            and stat.S_ISREG(held.st_mode)
            and (held.st_size, held.st_mtime_ns) == (read.st_size, read.st_mtime_ns)
        ):
            return False
        partial = target.with_name(f".{target.name}{_PARTIAL}{os.urandom(4).hex()}")
        # Created as the install's small files are: never writable by others, whatever
        # the umask, and never through a link.
        fd = os.open(partial, _CREATE_FLAGS, FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as written, source.open("rb") as read_from:
                shutil.copyfileobj(read_from, written)
            os.utime(partial, ns=(read.st_atime_ns, read.st_mtime_ns))
            partial.replace(target)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    except OSError as error:
        raise InstallerError(
            f"Could not copy {source} into {target.parent} ({error.strerror or error})."
        ) from error
    return True


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        raise InstallerError(f"Could not remove {path} ({error.strerror or error}).") from error


def discard_copy(copy: Path, suffix: str) -> None:
    """Remove what `mirror` wrote in `copy`, and `copy` once that leaves it empty; a link
    or a file under its name is left (uninstall names it)."""
    try:
        if not stat.S_ISDIR(copy.lstat().st_mode):
            return
    except FileNotFoundError:
        return
    for name in os.listdir(copy):  # noqa: PTH208 - names are compared
        entry = copy / name
        if (name.endswith(suffix) or _PARTIAL_NAME.fullmatch(name)) and stat.S_ISREG(
            entry.lstat().st_mode
        ):
            entry.unlink(missing_ok=True)
    if not os.listdir(copy):  # noqa: PTH208
        copy.rmdir()
