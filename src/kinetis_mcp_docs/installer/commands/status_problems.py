"""What keeps a client from reading pages, as `kinetis-docs status` reports it.

`status.py` examines the install directory and the clients and records what it found
(`Context`, `ClientFindings`, `DirectoryFindings`); `problems` alone decides, from that,
what is a problem and which command fixes it — the install's own `kinetis-docs`, with the
pages directory a registration has; for a source install, its checkout's `nox -s
setup_from_source`; with nothing installed, the README's command in a clone. Each client's
problems come first, in the order of `CLIENTS`, then the install directory's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..clients.base import SERVER_NAME, Client
from ..clients.known import CLIENTS
from ..clients.registration import Registration
from ..clients.scope import other_scope
from ..install_dir.advice import (
    delete_and_install,
    in_checkout,
    install_here,
    kinetis_docs,
    setup_with_new_python,
    with_new_python,
)
from ..install_dir.ownership import Found, Refusal
from ..install_dir.pages import Pages
from ..install_dir.safety import WRITABLE_FIX
from ..install_dir.throttle import WINDOW_SECONDS
from ..layout import DIR_ENVIRONMENT_VARIABLE, MARKER_NAME, InstallLayout
from .status_report import ClientStatus, Problem, utc

# A day past due, with a failure recorded since: the starts of that day tried and failed.
OVERDUE_SECONDS = 2 * WINDOW_SECONDS
# The command of each client, by the label a report names it with.
_EXECUTABLES = {client.label: client.executable for client in CLIENTS}


@dataclass(frozen=True)
class Context:
    """What status found before it asked the clients: the install directory, whether it is
    ours, the checkout a source install was set up from, and why the environment `current`
    points at cannot run. Every fix is worded with it."""

    root: Path
    found: Found | Refusal
    checkout: Path | None = None
    stranded: str | None = None


@dataclass(frozen=True)
class FailedRead:
    """A page read through a registered command that failed, with what was true of its
    pages directory (`served`; None for the Kinetis repository) when it did."""

    detail: str
    served: Path | None
    # The server said it could not read its page.
    read_failed: bool
    # The directory was not one the server could list and enter, or was not there at all.
    pages_unreadable: bool
    pages_gone: bool
    # What to check, as `verification.read_hint` said it then.
    hint: str


@dataclass(frozen=True)
class ClientFindings:
    """One client as status found it: its entry in the report, the registration its CLI
    reports, the pages that registration serves, and its page read when it failed."""

    client: Client
    report: ClientStatus
    registration: Registration | None = None
    pages: Pages = field(default_factory=Pages)
    failed_read: FailedRead | None = None


@dataclass(frozen=True)
class DirectoryFindings:
    """The install directory as status read it after the clients. For one that is ours:
    why it is unsafe (and the fix) or cannot be written, why its package source cannot be
    read, the checkout that source names, the environment `current` points at, and the
    update times (`failure`, a client start's failed update, only when none succeeded
    since)."""

    found: Found | Refusal
    over_http: list[str]
    unsafe: tuple[str, str] | None = None
    unwritable: str | None = None
    unreadable_source: str | None = None
    checkout: Path | None = None
    current: Path | None = None
    last: float | None = None
    now: float = 0.0
    failure: tuple[float, str] | None = None


def problems(
    context: Context, clients: list[ClientFindings], directory: DirectoryFindings
) -> list[Problem]:
    """Everything that keeps a client from reading pages, each with the command that fixes
    it: each client's problems, then the install directory's."""
    found = [problem for client in clients for problem in _client_problems(client, context)]
    reports = [client.report for client in clients]
    return [*found, *_directory_problems(context, directory, reports)]


def _client_problems(found: ClientFindings, context: Context) -> list[Problem]:
    """A client's CLI that cannot say, a registration at another scope, one turned off, a
    page read that failed, and a server the client reports failing."""
    client, report, registration = found.client, found.report, found.registration
    if report.error is not None:
        return [Problem(report.error, f"check that `{client.check_hint()}` works in this shell")]
    if registration is None:
        return []
    problems = []
    scoped = other_scope(client, registration)
    if scoped is not None:
        problems.append(Problem(scoped.what, f"{scoped.remove}; then run status again"))
    # Codex's `enabled = false`: the entry is kept, and no session ever starts it.
    if report.disabled:
        problems.append(
            Problem(
                f"{client.label} has {SERVER_NAME} disabled (`enabled = false` in its entry), "
                "so no session starts it",
                f"set `enabled = true` in [mcp_servers.{SERVER_NAME}] of {client.config_file}, "
                "or delete that line; then run status again",
            )
        )
    root, checkout = context.root, context.checkout
    pages = found.pages
    setup = _setup(client, pages, root, checkout)
    reinstall = f"{setup} reinstalls and registers it again"
    if context.stranded is not None:
        # Its own setup cannot start either: a clone's, with the Python there is now.
        reinstall = _with_new_python(
            root, checkout, [(client.label, _arguments(client.arguments, pages, checkout))]
        )
    if isinstance(context.found, Refusal):
        # A directory that is not ours is refused by its own setup too: a client running
        # it is mended by what mends the directory.
        reinstall = _refusal_fix(root, context.found)
    read = found.failed_read
    if read is not None:
        only_reinstall = context.stranded is not None or isinstance(context.found, Refusal)
        problems.append(
            Problem(
                f"{client.label} cannot read pages through its {SERVER_NAME}: {read.detail}",
                _read_fix(
                    read,
                    setup=setup,
                    reinstall=reinstall,
                    only_reinstall=only_reinstall,
                    from_checkout=checkout is not None,
                ),
            )
        )
    status = registration.status
    runs_here = report.runs_this_install
    if runs_here and status is not None and ("Connected" not in status or "Failed" in status):
        problems.append(
            Problem(
                f"{client.label} reports {SERVER_NAME} as {status!r}, not Connected",
                f"`{client.check_hint()}` says why; {reinstall}",
            )
        )
    return problems


def _read_fix(
    read: FailedRead, *, setup: str, reinstall: str, only_reinstall: bool, from_checkout: bool
) -> str:
    """What mends a failed page read: `reinstall`, the fix that installs and registers it
    again; with `only_reinstall` (the environment's Python is gone, or the directory is not
    ours, so `setup`, what registers it again as it is, cannot run or refuses) that whatever
    the server said. A page the server could not read, or a pages directory that is gone,
    which stops the server at its start, is the pages' doing; one that has gone from a
    source install (its checkout moved, read in place) is mended by the checkout's command
    in the clone's new place, as `setup` says."""
    if not only_reinstall and from_checkout and read.pages_gone:
        return f"The pages directory {read.served} is gone: run {setup}"
    if not only_reinstall and (read.read_failed or read.pages_unreadable):
        return f"{read.hint}, then run {setup}"
    return reinstall


def _directory_problems(
    context: Context, directory: DirectoryFindings, clients: list[ClientStatus]
) -> list[Problem]:
    """A directory that is not ours or holds nothing (no problem for a user of the HTTP
    route alone), one that is unsafe or cannot be written, a package source that cannot be
    read, no environment or one that cannot run, no client registered to run it, and a
    daily update that is stuck."""
    root = context.root
    found = directory.found
    if isinstance(found, Refusal):
        return [
            Problem(
                f"{root} is not an install of this tool: {found.reason}", _refusal_fix(root, found)
            )
        ]
    if found is not Found.OURS:
        if directory.over_http:
            return []
        return [Problem(f"Nothing is installed in {root}", _install_fix(root, clients))]
    problems = []
    if directory.unsafe is not None:
        reason, fix = directory.unsafe
        problems.append(Problem(reason, fix))
    if directory.unwritable is not None:
        problems.append(
            Problem(
                f"{directory.unwritable}, so no update can happen: neither a client start's, "
                "nor `update`, nor setup",
                f"{WRITABLE_FIX} (then run setup there)",
            )
        )
    if directory.unreadable_source is not None:
        problems.append(Problem(directory.unreadable_source, _setup_either(root, None, [])))
    checkout = directory.checkout
    layout = InstallLayout(root)
    if directory.current is None:
        problems.append(
            Problem(
                f"{layout.current} points at no environment",
                _setup_either(root, checkout, clients) + " again",
            )
        )
    elif context.stranded is not None:
        running = [client for client in clients if client.runs_this_install]
        chosen = running or [ClientStatus("Claude Code", None), ClientStatus("Codex", None)]
        problems.append(
            Problem(
                f"The environment {layout.current} points at, {directory.current}, cannot run: "
                f"{context.stranded}",
                _with_new_python(
                    root, checkout, [(c.client, _checkout_arguments(c, checkout)) for c in chosen]
                ),
            )
        )
    if not any(client.runs_this_install for client in clients):
        problems.append(_none_registered(root, checkout, clients))
    if directory.failure is not None and directory.last is not None:
        stuck = _stuck(directory.last, directory.now, directory.failure)
        if stuck is not None:
            problems.append(Problem(stuck, _overdue_fix(root, checkout, clients)))
    return problems


def _setup(client: Client, pages: Pages, root: Path, checkout: Path | None) -> str:
    """The setup that registers this install again as it is, quoted for a sentence: with
    the pages it serves, and for a source install from its checkout (its own setup would
    ask an index)."""
    if checkout is None:
        return f"`{kinetis_docs(root, 'setup', *client.arguments, pages=pages.setting())}`"
    arguments, settings = pages.session_arguments(checkout)
    return in_checkout(checkout, root, *client.arguments, *arguments, settings=settings)


def _stuck(last: float, now: float, failure: tuple[float, str]) -> str | None:
    """Why a recorded failure is a problem, or None while it may be a passing one: the
    update has failed for more than a day past due, or for as long as the clock hides.

    A last check in the future cannot say how long the updates have failed (the clock was
    set back after it), so the failure counts at once rather than once the clock has
    caught up, which may be months: the fix, an update, records the time anew.
    """
    tried = f"the last client start that tried, at {utc(failure[0])}, failed: "
    reason = failure[1].rstrip(".")
    if last > now:
        return (
            f"The last successful update check, at {utc(last)}, is in the future (the clock "
            "was turned back after it), so how long updates have failed cannot be told: "
            f"{tried}{reason}"
        )
    if now - last > OVERDUE_SECONDS:
        return (
            f"The daily update has not succeeded since {utc(last)}, more than a day past "
            f"due: {tried}{reason}"
        )
    return None


def _refusal_fix(root: Path, refusal: Refusal) -> str:
    """What mends a directory that is not ours: the refusal's own fix; for an install whose
    marker was damaged, deleting it and installing again (setup refuses it as it is)."""
    other = refusal.fix or f"set {DIR_ENVIRONMENT_VARIABLE} to the install directory you mean"
    if refusal.fix is None and refusal.damaged:
        return (
            f"if nothing of yours is in {root}, it is an install of this tool whose "
            f"{MARKER_NAME} marker was damaged: {delete_and_install(root)}; otherwise {other}"
        )
    return other


def _none_registered(root: Path, checkout: Path | None, clients: list[ClientStatus]) -> Problem:
    """No client runs `root`, as far as their CLIs tell: a client whose CLI is not on PATH
    was not asked, so its registration is named unchecked rather than absent."""
    setup = _setup_either(root, checkout, clients)
    unchecked = [client for client in clients if client.cli is None]
    if not unchecked:
        return Problem(f"No client is registered to run {root}", setup)
    missing = " nor ".join(
        f"the {client.client} CLI `{_EXECUTABLES[client.client]}`" for client in unchecked
    )
    runs = " or ".join(f"`{_EXECUTABLES[client.client]}`" for client in unchecked)
    if len(unchecked) == len(clients):
        return Problem(
            f"Neither {missing} is on PATH, so whether a client is registered to run {root} "
            "cannot be checked",
            f"run status again from a shell where {runs} runs; with neither client "
            f"installed, install one, then {setup}",
        )
    return Problem(
        f"No client whose CLI is on PATH is registered to run {root}; {missing} is not on "
        "PATH, so its registration was not checked",
        f"{setup}; or, if that client is the one you use, run status again from a shell "
        f"where {runs} runs",
    )


def _overdue_fix(root: Path, checkout: Path | None, clients: list[ClientStatus]) -> str:
    """What a failing daily update needs: the command that updates without a start's bounds,
    or, for a source install, its checkout's session (its wheelhouse is where it looks)."""
    if checkout is None:
        return (
            f"`{kinetis_docs(root, 'update')}` updates now, with no start-up time limit, or "
            "says what fails"
        )
    return f"{_setup_either(root, checkout, clients)}, which builds its wheelhouse again"


def _setup_either(root: Path, checkout: Path | None, clients: list[ClientStatus]) -> str:
    """The setup that installs and registers `root` for either client: the install's own,
    or, for a source install, its checkout's session for each client that runs it."""
    if checkout is None:
        return (
            f"`{kinetis_docs(root, 'setup')}` (Claude Code) or "
            f"`{kinetis_docs(root, 'setup', 'codex')}` (Codex)"
        )
    running = [client for client in clients if client.runs_this_install]
    chosen = running or [ClientStatus("Claude Code", None), ClientStatus("Codex", None)]
    commands = []
    for client in chosen:
        arguments, settings = _checkout_arguments(client, checkout)
        command = in_checkout(checkout, root, *arguments, settings=settings)
        commands.append(f"{command} ({client.client})")
    return " or ".join(commands)


def _checkout_arguments(client: ClientStatus, checkout: Path | None) -> tuple[list[str], list[str]]:
    """What follows `--` in the checkout's session, and the settings before it, to register
    `client` again with the pages it serves; a client not registered gets the session's
    own (a copy of the checkout's docs/)."""
    codex = ["codex"] if client.client == "Codex" else []
    if not client.registered:
        return codex, []
    if client.pages is not None:
        pages = Pages(Path(client.pages))
    elif client.pages_held:
        pages = Pages(Path(client.pages_held), held=True)
    else:
        pages = Pages()
    return _arguments(codex, pages, checkout)


def _arguments(
    client_arguments: list[str], pages: Pages, checkout: Path | None
) -> tuple[list[str], list[str]]:
    """The session's arguments and settings that register a client with its pages again,
    from `checkout` (None: any clone, for an install not made from one)."""
    arguments, settings = pages.session_arguments(checkout)
    return [*client_arguments, *arguments], settings


def _install_fix(root: Path, clients: list[ClientStatus]) -> str:
    """How to install here — or to look at the install a client does run."""
    here = (
        f"from a clone of kinetis-mcp-docs, `{install_here(root)}` (Claude Code) or "
        f"`{install_here(root, 'codex')}` (Codex), as its README says"
    )
    for client in clients:
        if client.install_directory is not None and not client.runs_this_install:
            status = kinetis_docs(Path(client.install_directory), "status")
            return (
                f"{client.client} runs the install in {client.install_directory}: "
                f"`{status}` shows it; or install here {here}"
            )
    return f"install it {here}"


def _with_new_python(
    root: Path,
    checkout: Path | None,
    clients: list[tuple[str, tuple[list[str], list[str]]]],
) -> str:
    """Setup again, for the clients named with their session arguments and settings, from
    a clone with the Python there is now: the install's own command cannot start without
    its Python."""
    commands = " or ".join(
        f"`{with_new_python(root, *arguments, checkout=checkout, settings=settings)}` ({label})"
        for label, (arguments, settings) in clients
    )
    return f"{setup_with_new_python(checkout)}: {commands}"
