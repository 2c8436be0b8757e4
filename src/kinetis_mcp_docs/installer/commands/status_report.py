"""What `kinetis-docs status` reports, as data and as text.

The report's types are what `--json` prints (`Status.as_json`), field for field; `render`
is the same report as lines for a terminal. Neither examines anything nor decides what is a
problem: `status.py` examines, and `status_problems.py` decides.
Registered variables are named, never shown: a recorded value may carry credentials.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..clients.base import SERVER_NAME
from ..clients.scope import other_than_user
from ..install_dir.advice import in_checkout
from ..layout import DIR_ENVIRONMENT_VARIABLE


@dataclass(frozen=True)
class Problem:
    """Something that keeps a client from reading pages, and the command that fixes it."""

    problem: str
    fix: str


@dataclass(frozen=True)
class PageRead:
    """One page read through a registered command."""

    ok: bool
    detail: str
    stderr_file: str | None = None


@dataclass(frozen=True)
class ClientStatus:
    """What one client's CLI reports, and whether its registration reads pages."""

    client: str
    cli: str | None
    registered: bool = False
    command: list[str] | None = None
    # Names only: a recorded value may carry credentials (a mirror URL, say).
    recorded_variables: list[str] = field(default_factory=list)
    install_directory: str | None = None
    runs_this_install: bool = False
    # The `--docs-dir` the registration names; without one, the directory of which the
    # install holds the copy it serves, if it holds one; where its pages come from, in words.
    pages: str | None = None
    pages_held: str | None = None
    pages_from: str | None = None
    reported_status: str | None = None
    # Claude Code's scope as it says it; None for Codex, which has none.
    scope: str | None = None
    # Codex's `enabled = false`: registered, and started by no session.
    disabled: bool = False
    # stdio, or http / sse / streamable_http with its URL and the names of its headers.
    transport: str | None = None
    url: str | None = None
    headers: list[str] = field(default_factory=list)
    # The registration in words: its command, or what it is when it runs none.
    description: str | None = None
    page_read: PageRead | None = None
    error: str | None = None


@dataclass(frozen=True)
class EnvironmentStatus:
    """One environment of the install: where, and the version it holds."""

    path: str
    version: str | None
    # Why it cannot run (its Python is gone), or None.
    cannot_run: str | None = None


@dataclass(frozen=True)
class HeldCopy:
    """The install's copy of the pages: where it is, the directory it is made from (None
    when its record is unreadable), and whether that directory is there."""

    path: str
    copied_from: str | None
    origin_exists: bool


@dataclass(frozen=True)
class InstallStatus:
    """The install directory: what is there, and its update state (times in UTC)."""

    path: str
    chosen_by: str
    state: str  # installed, absent, empty or not-ours
    detail: str
    current: EnvironmentStatus | None = None
    previous: EnvironmentStatus | None = None
    last_update_check: str | None = None
    # None: due, so the next client start checks.
    next_update_check: str | None = None
    # A client start's failed update since the last good one: when, and why.
    last_failed_update: str | None = None
    last_failure: str | None = None
    # Where pip looks for it (setup's record; None for an install made before it existed),
    # and the checkout a source install is set up from again.
    package_source: str | None = None
    source_checkout: str | None = None
    # Whether that checkout has gone (moved, deleted) since, and whether the install holds
    # a copy of its wheelhouse (one made before copies existed reads it in the checkout).
    source_checkout_gone: bool | None = None
    wheelhouse_held: bool | None = None
    pages_copy: HeldCopy | None = None
    # With nothing installed: the clients' registrations of the HTTP route, in words, which
    # need no install.
    over_http: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Status:
    """Everything `kinetis-docs status` reports."""

    install: InstallStatus
    clients: list[ClientStatus]
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, **asdict(self)}


def utc(seconds: float) -> str:
    """A time as the report gives it: in UTC, to the second."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def render(status: Status) -> list[str]:
    """The report as lines of text for a terminal."""
    install = status.install
    chosen = (
        f"from {DIR_ENVIRONMENT_VARIABLE}"
        if install.chosen_by == DIR_ENVIRONMENT_VARIABLE
        else f"the default; {DIR_ENVIRONMENT_VARIABLE} chooses another"
    )
    lines = [f"Install directory: {install.path} ({chosen})"]
    lines.append(f"  State: {install.state}: {install.detail}")
    if install.state == "installed":
        lines.append(f"  Current: {_shown(install.current)}")
        previous = _shown(install.previous)
        if install.previous is not None and install.previous.cannot_run is not None:
            previous += "; not one to roll back to"
        lines.append(f"  Previous: {previous}")
        lines.append(f"  Last update check: {install.last_update_check or 'none recorded'}")
        if install.last_failed_update is not None:
            lines.append(
                f"  Last failed update: {install.last_failed_update}: {install.last_failure}"
            )
        due = (
            f"at the first client start after {install.next_update_check}"
            if install.next_update_check
            else "due: the next client start checks"
        )
        lines.append(f"  Next update check: {due}")
        if install.pages_copy is not None:
            lines.append(f"  Pages held: {_held(install.pages_copy)}")
        if install.package_source is not None:
            lines.append(f"  Package source: {install.package_source}")
        if install.source_checkout is not None:
            lines.append(f"  Source checkout: {_checkout(install, status.clients)}")
    lines.extend(
        f"  HTTP route: {route}: served by the route, needing no install here"
        for route in install.over_http
    )
    for client in status.clients:
        lines.extend(_client_lines(client))
    if status.ok and install.over_http:
        lines.append(
            "No problems: nothing is installed here, and the clients that use the HTTP route "
            "need nothing installed (`claude mcp get` shows whether the route answers)."
        )
        return lines
    if status.ok:
        lines.append("No problems: every client registered to this install reads its pages.")
        return lines
    count = len(status.problems)
    lines.append(f"{count} problem{'s' if count > 1 else ''}:")
    for problem in status.problems:
        lines.append(f"  - {problem.problem}")
        lines.append(f"    Fix: {problem.fix}")
    return lines


def _held(copy: HeldCopy) -> str:
    """The install's copy of the pages, where it comes from, and what keeps it current."""
    origin = copy.copied_from or "a directory its record no longer names"
    held = (
        f"a copy of {origin} in {copy.path}, served by every registration of this install "
        "that names no pages directory"
    )
    if copy.origin_exists:
        return f"{held}; made again from {origin} at each setup and update"
    return f"{held}; {origin} is gone, so it stays as it was last copied"


def _checkout(install: InstallStatus, clients: list[ClientStatus]) -> str:
    """A source install's checkout: how the install takes its changes, and what moving or
    deleting it stops: nothing, unless a registration reads its docs/ in place, or the
    install was made before it held a copy of the checkout's wheelhouse."""
    checkout, root = Path(install.source_checkout or ""), Path(install.path)
    take = f"{in_checkout(checkout, root, pull=True)} (add `-- codex` for Codex)"
    again = f"{in_checkout(checkout, root)} (add `-- codex` for Codex)"
    stops = [] if install.wheelhouse_held else ["its updates, which read the checkout's wheelhouse"]
    in_place = [
        client.client
        for client in clients
        if client.runs_this_install and client.pages and Path(client.pages).is_relative_to(checkout)
    ]
    if in_place:
        stops.append(f"the page reads of {' and '.join(in_place)}, which read its docs/ in place")
    if install.source_checkout_gone:
        if stops:
            return (
                f"{checkout}, which is gone (moved or deleted): {', and '.join(stops)}, fail "
                f"until it is set up again with {again}"
            )
        return (
            f"{checkout}, which is gone (moved or deleted): the install serves and updates "
            f"from its own copies, as they were at its last setup or update; to set it up from "
            f"the clone, {again}"
        )
    moving = (
        f"stops {' and '.join(stops)}"
        if stops
        else "changes nothing this install serves or updates from: it holds copies of both"
    )
    return (
        f"{checkout}; it takes the checkout's changes with {take}. Moving or deleting it {moving}"
    )


def _shown(env: EnvironmentStatus | None) -> str:
    if env is None:
        return "none"
    shown = f"kinetis-mcp-docs {env.version or '(version unreadable)'} in {env.path}"
    return shown if env.cannot_run is None else f"{shown}, which cannot run: {env.cannot_run}"


def _client_lines(client: ClientStatus) -> list[str]:
    if client.cli is None:
        return [f"{client.client}: its CLI is not on PATH"]
    if client.error is not None:
        return [f"{client.client}: {client.error}"]
    if not client.registered:
        return [f"{client.client}: no {SERVER_NAME} registration"]
    if client.command is None:
        lines = [f"{client.client}: {SERVER_NAME} is {client.description}, not this install"]
    else:
        if client.runs_this_install:
            where = "runs this install"
        elif client.install_directory is not None:
            where = f"runs the install in {client.install_directory}"
        else:
            where = "runs a command this installer did not write"
        pages = client.pages_from or client.pages or "the Kinetis repository"
        lines = [f"{client.client}: {SERVER_NAME} {where}, with pages from {pages}"]
        lines.append(f"  Command: {shlex.join(client.command)}")
    lines.extend(_setting_lines(client))
    if client.recorded_variables:
        lines.append(f"  Recorded variables: {', '.join(client.recorded_variables)}")
    if client.reported_status is not None:
        lines.append(f"  {client.client} reports: {client.reported_status}")
    if client.page_read is not None:
        verdict = "ok" if client.page_read.ok else "FAILED"
        lines.append(f"  Page read: {verdict}: {client.page_read.detail}")
    return lines


def _setting_lines(client: ClientStatus) -> list[str]:
    """Where the client keeps the registration, and whether it is switched off there."""
    lines = []
    if other_than_user(client.scope):
        lines.append(f"  Scope: {client.scope}")
    if client.disabled:
        lines.append(f"  Disabled: its entry says `enabled = false`; {client.client} starts none")
    return lines
