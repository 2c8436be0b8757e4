"""What every client spawn runs: `DIR/current/bin/python -I -m kinetis_mcp_docs.installer.start`.

In order:

1. Find the install directory from the running interpreter — its environment is
   `DIR/envs/<name>` — and require the marker that proves the directory is ours.
2. Read `.last-update-check`, without any lock. Inside the window (every start but one a
   day), go straight to 4: no lock is taken and nothing of the update is imported.
3. An update is due: `update.update_if_due` takes `DIR/.update.lock`, waiting while it is
   held, up to the update's deadline: past it, `current` (always a whole environment)
   serves as it is. A spawn that had to wait does not update: the holder (another spawn,
   or `setup`) has just installed or updated, or tried. Otherwise the timestamp is read again under
   the lock and, still due, the update runs, bounded by its deadline; any failure is one
   line on stderr (its reason kept in `.last-update-failure` for `status`) and the
   installed server starts anyway; the next spawn tries again. The lock is released — its
   descriptor closed — before the server runs, so a long session never holds off the
   next update.
4. If `current` is no longer the environment this interpreter runs in (this spawn, or the
   one it waited for, switched it), exec the server of the new environment, so the new
   version answers. Otherwise serve in this process.

The server is handed the command's own options (`--docs-dir`, as registered). A command
registered with none serves the install's copy of the pages, `DIR/pages`, when it holds one
(a real directory, never a link), and the Kinetis repository otherwise: the install records
what it serves, so that a client, `status` and a person running the command by hand
(troubleshooting.md) all get the same pages (see `install_dir/pages.py`).

The fast path does no network, starts no other process, takes no lock and imports only
`os`, `stat`, `sys`, `time` and the server itself: this module avoids pathlib, typing and
dataclasses (and so `layout.py`; the names come from `names.py`), and imports the update
machinery, filelock with it, only when an update is due.

Nothing is written to stdout here: it carries protocol frames, and the server reserves it
for them. Messages go to stderr, and pip's output is sent there too (`envs/pip.py`). Before
anything else, the standard descriptors are made safe (`standard_streams`): a closed stderr
is opened on the null device, a closed stdout refused with one line and exit status 1, and
every message goes through the server's `StderrLog`, so a stderr nobody reads can cost a
message but never hang the start. (pip writes to the descriptor itself and may block on
it, but only until the update's deadline stops its process group.)

An environment whose files are partly gone (an uninstall interrupted, a directory deleted
by hand) cannot import what this module or the server needs: that is one line on stderr
and exit status 1, not a traceback (`missing_files`).
"""

# pathlib stays off the spawn path (see above), so paths here are `os.path` strings.
# ruff: noqa: PTH118, PTH119, PTH120

from __future__ import annotations

import os
import stat
import sys
import time

try:
    from .. import __version__
    from ..server.core.display import say
    from ..server.stdio.standard_streams import StdoutClosed, open_standard_streams
    from .install_dir.files import read_regular
    from .install_dir.throttle import (
        is_due,
        read_last_check,
    )
    from .names import (
        CURRENT_NAME,
        DOCS_DIR_OPTION,
        ENVS_NAME,
        LAST_CHECK_NAME,
        MARKER_CONTENT,
        MARKER_NAME,
        PAGES_NAME,
        SERVER_MODULE,
    )
except ImportError as missing:
    # Run as the registered command from an environment whose files are partly gone (an
    # uninstall interrupted, a directory deleted by hand): one line, not a traceback. The
    # line is written by hand, since what would write it may be what is missing; imported
    # (by an update's check), the error stands.
    if __name__ != "__main__":
        raise
    line = (
        f"kinetis-docs: {os.path.realpath(sys.prefix)} is missing files ({missing}): it was "
        "removed or changed while in use. Run setup again to repair the install, or "
        "uninstall it; exiting."
    )
    # Escaped: one line, whatever the path holds.
    try:  # noqa: SIM105 - contextlib is kept off the spawn path
        os.write(2, line.encode("unicode_escape") + b"\n")
    except OSError:
        pass  # no stderr to say it on
    sys.exit(1)

_MARKER_BYTES = MARKER_CONTENT.encode()

# The environment as this interpreter found it (through the `current` link), and the
# directory that link resolved to. Taken at import, the earliest moment this code runs, so
# that a switch by another spawn while this one starts moves it as little as possible.
_STARTED_AS = sys.prefix
_ENVIRONMENT = os.path.realpath(sys.prefix)


def main() -> int:
    """Check for an update if one is due, then serve (here, or exec'd into a new version)."""
    try:
        log = open_standard_streams()
    except StdoutClosed as error:
        _say(f"{error}; exiting.")
        return 1
    root = install_directory(_ENVIRONMENT)
    if root is None:
        _say(
            f"{_ENVIRONMENT} is not an environment of a kinetis-mcp-docs install directory "
            "(no envs/ parent with a valid .kinetis-mcp-docs marker); install it again as "
            "the README says, in a clone: `python3 -m venv .venv && .venv/bin/python -m pip "
            "install 'nox[uv]' && .venv/bin/python -m nox -s setup_from_source`."
        )
        return 1
    pin_to_environment(_STARTED_AS, _ENVIRONMENT)
    # The command line is refused before anything is read, an update's lock included.
    from ..server.stdio.serve import UsageError, parse_docs_dir  # noqa: PLC0415

    arguments = sys.argv[1:]
    if not {"-h", "--help"} & set(arguments):
        try:
            parse_docs_dir(arguments)
        except UsageError as error:
            _say(str(error))
            return 2
    serving = _ENVIRONMENT
    if _update_due(root, time.time()):
        serving = _update(root)
    # Read after the update, which refreshes the install's copy of the pages.
    arguments = arguments or held_pages_arguments(root)
    if serving != _ENVIRONMENT:
        python = os.path.join(serving, "bin", "python")
        if os.access(python, os.X_OK):
            log.drain()  # the lines said so far, bounded: an exec would drop them
            # An argv list, no shell; the lock's descriptor is already closed.
            # The server's own options (`--docs-dir`) go with it, as registered.
            os.execv(python, [python, "-I", "-m", SERVER_MODULE, *arguments])  # noqa: S606
        _say(f"{root}/{CURRENT_NAME} has no usable Python; serving {__version__} instead.")
    from ..server.stdio.serve import main as serve  # noqa: PLC0415 - after pinning

    return serve(arguments)


def held_pages_arguments(root: str) -> list[str]:
    """The server's options for a command registered with none: the install's copy of the
    pages when it holds one (a directory, not a link), else none (the Kinetis repository)."""
    pages = os.path.join(root, PAGES_NAME)
    try:
        held = stat.S_ISDIR(os.lstat(pages).st_mode)
    except OSError:
        held = False
    return [DOCS_DIR_OPTION, pages] if held else []


def _update_due(root: str, now: float) -> bool:
    """The throttle, read without the lock: a day since the last success."""
    return is_due(read_last_check(os.path.join(root, LAST_CHECK_NAME)), now)


def install_directory(environment: str) -> str | None:
    """The install directory owning `environment` (`DIR/envs/<name>`), or None."""
    parent = os.path.dirname(environment)
    if os.path.basename(parent) != ENVS_NAME:
        return None
    root = os.path.dirname(parent)
    return root if _carries_marker(root) else None


def _carries_marker(root: str) -> bool:
    # Ownership is the content of a regular file, as `setup` decides it: a symlink, a
    # directory or a FIFO under that name does not count (and cannot block the read).
    return read_regular(os.path.join(root, MARKER_NAME), len(_MARKER_BYTES)) == _MARKER_BYTES


def pin_to_environment(started_as: str, environment: str) -> None:
    """Make every later import of this process come from `environment`, not `current`.

    The interpreter was started through the `current` link, so `sys.prefix`, the
    site-packages entry of `sys.path` and the `__path__` of the packages already imported
    all go through it. A later spawn may switch `current` while this server runs; without
    this, a lazy import would then load the other version's modules into this one. Each
    such path is rewritten to the resolved directory. Package `__path__` lists are changed
    in place: they are the same objects as their specs' `submodule_search_locations`.
    """
    if started_as == environment:
        return

    def pinned(path: str) -> str:
        if path == started_as or path.startswith(started_as + os.sep):
            return environment + path[len(started_as) :]
        return path

    sys.path[:] = [pinned(entry) for entry in sys.path]
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [pinned(entry) if isinstance(entry, str) else entry for entry in search]
    sys.prefix = pinned(sys.prefix)
    sys.exec_prefix = pinned(sys.exec_prefix)
    sys.executable = pinned(sys.executable)


def _update(root: str) -> str:
    """Run a due update; return the environment to serve. Any failure is one line."""
    try:
        # Imported here, not at the top: this is the slow path, and the fast one must not
        # pay for filelock, subprocess, json, venv machinery and pathlib.
        from pathlib import Path  # noqa: PLC0415

        from .layout import InstallLayout  # noqa: PLC0415
        from .update import (  # noqa: PLC0415
            spawn_timeout,
            update_if_due,
        )

        layout = InstallLayout(Path(root))
        return update_if_due(
            layout,
            timeout=spawn_timeout(layout, os.environ),
            on_wait=lambda: _say(f"waiting for another update of {root} to finish."),
            say=_say,
        )
    except Exception as error:  # noqa: BLE001 - every failure must still start the server
        reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        reason = reason.rstrip(".")
        _say(f"could not update ({reason}); starting the installed version {__version__}.")
        return _ENVIRONMENT


def _say(message: str) -> None:
    # The server's own way (one line, control characters escaped): these lines reach the
    # same client log as the server's, and they name paths, which may hold anything.
    say(message)


def missing_files(error: ImportError) -> str:
    """The line for a module of this environment that cannot be loaded: its files went
    away (an uninstall interrupted, the directory deleted while a server ran)."""
    return (
        f"{_ENVIRONMENT} is missing files ({error}): it was removed or changed while in use. "
        "Run setup again to repair the install, or uninstall it; exiting."
    )


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        # Ctrl-C while updating (pip's group is already killed) or waiting for the lock.
        sys.exit(130)
    except ImportError as error:
        # The server's modules, imported once this start is done with: their files are gone.
        _say(missing_files(error))
        sys.exit(1)
