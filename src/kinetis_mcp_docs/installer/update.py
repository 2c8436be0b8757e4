"""The update: under the lock, bring `current` to the newest release the requirement allows.

One resolution decides everything (`envs/resolve.py`): pip is asked, without installing
anything, what a fresh install of the requirement (`kinetis-mcp-docs>=1.0,<2`, with every
dependency at its newest allowed version) would contain, looking where the install's
recorded package source says (`package_source.py`), whoever updates. If that is exactly
what `current` holds, nothing is built and the time is recorded. Otherwise a new
environment is built beside the installed one from those exact pins (`--no-deps`, so pip
does not resolve a second time), checked offline and switched to (`envs/candidate.py`).
Before any of it, the copies the install holds (of its pages, of a source install's
wheelhouse) are made again from where they come from, while that is there
(`install_dir/pages.py`, `install_dir/wheelhouse.py`).

Two entries, one body (`update`); the `kinetis-docs update` command is over the second
(`commands/update.py`):

- `update_if_due`, what a client spawn runs once its throttle said an update is due: it
  takes the lock (waiting while another process holds it), and updates only if it did not
  wait and the timestamp, read again under the lock, still says due. pip fails fast there:
  no retries and a short socket timeout (`fail_fast`), and the check for a newer release
  gets at most `SPAWN_RESOLVE_SHARE` of the deadline (2.5 s of the default 5), so an
  unreachable index costs a spawn well under a second, and an index or a name server that
  never answers less than three. pip's output is kept out of the client's log but for the
  one line that says why it failed. A failure is recorded apart from the time of the last
  success (`.last-update-failure`) for `status` to report; the next start tries again, as
  the reference has it.
- `update_now`, the same update whatever the timestamp, under the same lock, bounded as
  its caller says.

The whole update runs against one deadline. Past it pip is killed, the partial environment
removed, and the installed environment left as it was. This module is imported only when an
update is due or asked for, which keeps its imports (filelock, subprocess, json) off the
spawn's fast path.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ..seconds import parse_seconds
from .envs.candidate import candidate
from .envs.environment import Environment
from .envs.metadata import DISTRIBUTION
from .envs.pip import PipRun
from .envs.resolve import resolve
from .errors import InstallerError
from .install_dir.lock import LockBusy, update_lock
from .install_dir.package_source import PackageSource, read_source
from .install_dir.pages import refresh_pages
from .install_dir.safety import check_install
from .install_dir.scratch import emptied_scratch
from .install_dir.throttle import (
    is_due,
    read_last_check,
    record_failure,
    record_success,
)
from .install_dir.wheelhouse import refresh_wheelhouse
from .layout import REQUIREMENT, InstallLayout

TIMEOUT_VARIABLE = "KINETIS_MCP_DOCS_UPDATE_TIMEOUT"
# Codex drops a server that has not started within 10 s, and Claude Code's wait is of the
# same order. 5 s of updating leaves the other half for the server to start and answer.
DEFAULT_TIMEOUT_SECONDS = 5.0
# pip's own options, which win over its configuration: a refused or unresolvable index fails
# at once instead of after pip's five retries with back-off (about 8 s), and a socket that
# stays silent for this share of the start's deadline (1.5 s of the default 5 s) — an index
# that accepts connections and never answers — fails then rather than after pip's default
# 15 s. A slow but flowing download is not cut short. A share, not a fixed 1.5 s: a longer
# deadline (KINETIS_MCP_DOCS_UPDATE_TIMEOUT) lengthens every bound of the start alike.
SPAWN_SOCKET_SHARE = 0.3


def fail_fast(spawn: float) -> list[str]:
    """pip's options on a client start whose update deadline is `spawn` seconds."""
    return ["--retries", "0", "--timeout", f"{spawn * SPAWN_SOCKET_SHARE:g}"]


# pip's --timeout does not bound a name lookup: a name server that never answers holds
# getaddrinfo for the resolver's own timeouts (5 s, twice, by default). So on a spawn the
# check for a newer release gets at most this share of the deadline (2.5 s of the default
# 5 s, and as much more as KINETIS_MCP_DOCS_UPDATE_TIMEOUT gives), and a DNS black hole
# costs what a silent index costs, leaving the rest for a build. A slower index is left to
# `kinetis-docs update`.
SPAWN_RESOLVE_SHARE = 0.5


def _quiet(line: str) -> None:
    """A spawn's update says nothing when it succeeds."""


def update_timeout(environ: Mapping[str, str]) -> float:
    """The update deadline in seconds: `KINETIS_MCP_DOCS_UPDATE_TIMEOUT`, else 5.

    A value that is not a positive finite number of seconds is refused rather than guessed
    at, so a typo cannot turn into an unbounded update on every spawn.
    """
    text = environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_SECONDS
    seconds = parse_seconds(text)
    if seconds is None:
        raise InstallerError(
            f"{TIMEOUT_VARIABLE}={text!r} is not a positive number of seconds, so no update "
            "was attempted; give the server a number of seconds, such as 10, or remove the "
            "variable."
        )
    return seconds


def spawn_timeout(layout: InstallLayout, environ: Mapping[str, str]) -> float:
    """`update_timeout` for a client start whose update is due; a refused value is that
    start's failed update, recorded for `status` before `InstallerError` is raised.

    The update is skipped rather than run with the default: the setting says the user
    wanted another bound, and a failure recorded for a run that then succeeded would be
    cleared by that success, leaving the typo nowhere to be seen. No lock is taken: the
    record is one atomic write, and without a valid deadline there is none to wait by.
    """
    try:
        return update_timeout(environ)
    except InstallerError as error:
        _record_failure(layout, error)
        raise


def update_if_due(
    layout: InstallLayout,
    *,
    timeout: float,
    on_wait: Callable[[], None] | None = None,
    say: Callable[[str], None] = _quiet,
) -> str:
    """A spawn's update; returns the environment `current` then points at (resolved).

    Call once the timestamps, read without the lock, said an update is due. Takes the lock,
    waiting while another process holds it (`on_wait` is called first), but no longer than
    `timeout` seconds, the start's own deadline: `current` is always a whole environment,
    so past that the start serves it as it is (saying so through `say`), unless there is
    none yet, as while a first setup runs, which it waits for. A spawn that had to wait does
    not update: the holder has just installed or updated, or tried. Otherwise the
    timestamps are read again under the lock, and the update runs, bounded by `timeout`
    seconds, only if it is still due; a failure is recorded (`throttle.record_failure`) for
    `status` to report, and the next start tries again. Raises `InstallerError` on any
    failure.
    """
    started = time.monotonic()
    try:
        with update_lock(layout.lock, on_wait=on_wait, wait_at_most=timeout) as held:
            now = time.time()
            if not held.waited and is_due(read_last_check(layout.last_update_check), now):
                try:
                    update(layout, deadline=started + timeout, spawn=timeout)
                except InstallerError as error:
                    _record_failure(layout, error)
                    raise
            # Read under the lock: only a holder switches `current`.
            return os.path.realpath(layout.current)
    except LockBusy:
        pass
    installed = Environment.current(layout)
    if installed is not None:
        say(
            f"{layout.root} was still being updated after {timeout:g} s, this start's update "
            f"deadline; starting the version installed there now, {installed.version()}."
        )
        return os.path.realpath(installed.path)
    say(
        f"{layout.root} has no complete install yet ({layout.current} points at none): "
        "waiting for the setup that holds its update lock to finish."
    )
    with update_lock(layout.lock):
        return os.path.realpath(layout.current)


def _record_failure(layout: InstallLayout, error: InstallerError) -> None:
    """Record a spawn's failed update; a failure to record it costs only the back-off."""
    try:  # noqa: SIM105 - the spawn path keeps contextlib out
        record_failure(layout.last_update_failure, time.time(), error.message)
    except OSError:
        pass


def update_now(
    layout: InstallLayout,
    *,
    deadline: float | None,
    say: Callable[[str], None] = _quiet,
) -> Path | None:
    """The spawn's update, now, whatever the timestamp, under the same lock.

    Waits while another process holds the lock (saying so through `say`), then runs
    `update` with one line per step through `say`. Returns the new environment when
    `current` was switched, None when it was already up to date; raises `InstallerError`.
    """
    with update_lock(
        layout.lock, on_wait=lambda: say(f"Waiting for another update of {layout.root}")
    ):
        return update(layout, deadline=deadline, say=say)


def update(
    layout: InstallLayout,
    *,
    deadline: float | None,
    spawn: float | None = None,
    say: Callable[[str], None] = _quiet,
) -> Path | None:
    """Bring `current` up to the newest release within the requirement, by `deadline`.

    `deadline` is a `time.monotonic()` value (None: no bound). pip looks where the
    install's recorded package source says (`package_source.py`). `spawn` is a client
    start's update deadline in seconds, for the start's own bounds: `fail_fast` on every pip
    call, the check for a newer release given up after `SPAWN_RESOLVE_SHARE` of it, and
    pip's output kept out of the client's log but for the line that says why it failed.
    Returns the new environment when `current` was switched to one, None when the installed
    one is already up to date; records the time in both cases. Raises `InstallerError` (and
    records nothing) on any failure, the deadline included, having left the installed
    environment as it was. Must run under the update lock.
    """
    check_install(layout)
    installed = Environment.current(layout)
    if installed is None:
        # Its own command is gone with it: name the README's.
        from .install_dir.advice import install_here  # noqa: PLC0415

        raise InstallerError(
            f"{layout.current} does not point at an environment; install it again from a "
            f"clone of kinetis-mcp-docs with `{install_here(layout.root)}` (`-- codex` for "
            "Codex)."
        )
    _refresh_copies(layout, say)
    source = read_source(layout)
    if source is not None:
        refreshed = refresh_wheelhouse(layout, source)
        if refreshed:
            say(f"Refreshed the install's copy of {source.copied_from} ({refreshed} changed)")
    if source is not None and source.missing_wheelhouses():
        raise _wheelhouse_gone(layout, source)
    pip = PipRun(
        environ=None if source is None else source.pip_environment(os.environ),
        summarize=spawn is not None,
        scratch=emptied_scratch(layout),
    )
    options = fail_fast(spawn) if spawn is not None else []
    say(f"Checking for a newer release of {REQUIREMENT}")
    within = None if spawn is None else spawn * SPAWN_RESOLVE_SHARE
    resolved = _resolve_in_time(
        installed, deadline=deadline, pip=pip, within=within, options=options
    )
    newest = resolved[DISTRIBUTION]
    if resolved.items() <= installed.distributions().items():
        record_success(layout, time.time())
        say(f"{DISTRIBUTION} {newest} is installed and up to date")
        return None
    pins = [f"{name}=={version}" for name, version in sorted(resolved.items())]
    say(f"Installing {DISTRIBUTION} {newest} beside {installed.version()}")
    with candidate(
        layout, [*options, "--quiet", "--no-deps", *pins], deadline=deadline, pip=pip
    ) as new:
        say("Checking the new environment's server")
        new.check(deadline=deadline, expected=newest)
        new.switch()
        record_success(layout, time.time())
    say(f"Switched to {DISTRIBUTION} {newest}")
    return new.environment.path


def _refresh_copies(layout: InstallLayout, say: Callable[[str], None]) -> None:
    """The install's copy of the pages made again from their directory while it is there,
    before anything else of the update, which may fail (`pages.refresh_pages`)."""
    refreshed = refresh_pages(layout)
    if refreshed is not None and refreshed[1]:
        origin, changed = refreshed
        say(f"Refreshed the install's copy of the pages from {origin} ({changed} changed)")


def _wheelhouse_gone(layout: InstallLayout, source: PackageSource) -> InstallerError:
    """The wheelhouses the install comes from are gone: say so, and how to install again."""
    # Only on this failure: the spawn path imports no more than it needs.
    from .install_dir.advice import in_checkout  # noqa: PLC0415

    houses = ", ".join(os.fspath(house) for house in source.wheelhouses())
    checkout = source.checkout()
    fix = (
        f"build it again with {in_checkout(checkout, layout.root)} (add `-- codex` for Codex)"
        if checkout is not None
        else "run setup again from where its packages are now"
    )
    return InstallerError(
        f"The wheelhouse {layout.root} was installed from, {houses}, is gone; {fix}."
    )


def _resolve_in_time(
    installed: Environment,
    *,
    deadline: float | None,
    pip: PipRun,
    within: float | None,
    options: list[str],
) -> dict[str, str]:
    """`resolve`, failing fast and given up after `within` seconds when given a bound."""
    if within is None:
        return resolve(installed, deadline=deadline, pip_options=[], pip=pip)
    capped = time.monotonic() + within
    if deadline is not None and deadline <= capped:
        return resolve(installed, deadline=deadline, pip_options=options, pip=pip)
    try:
        return resolve(installed, deadline=capped, pip_options=options, pip=pip)
    except InstallerError:
        if time.monotonic() < capped:
            raise
        # Only on this failure: the spawn path imports no more than it needs.
        from .install_dir.advice import kinetis_docs  # noqa: PLC0415

        raise InstallerError(
            f"Could not check for a newer {DISTRIBUTION} within {within:g} s, the most a "
            "client start waits for the package index (or a name server) to answer: half of "
            f"its update deadline, which {TIMEOUT_VARIABLE} sets; "
            f"`{kinetis_docs(installed.layout.root, 'update')}` waits longer"
        ) from None
