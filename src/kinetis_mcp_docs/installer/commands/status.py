"""`kinetis-docs status [--json]`: is it installed, current, registered, and are pages readable?

What it reports: the install directory and what its marker says, the versions `current`
and `previous` hold, the last update check (and a client start's failed update since) and
when the next is due, where its packages come from (and, for a source install, how it takes
its checkout's changes), the registration each client's CLI reports, and — for each
registration that runs this install — one real page read through the registered command,
in the environment that client gives the server.
Claude Code's "Connected" only means the server answered `initialize`; the page read is
what shows that pages arrive (through the proxy, with the CA bundle, from the pages
directory).

It changes nothing itself. Starting the registered command is what a client start does,
though, so when the daily update is due that start runs it (bounded as any start is), and
`claude mcp get` starts it too. The install directory is read after the clients, so it
shows what the next client start will find.

Broken is whatever keeps a client from reading pages: nothing installed, a directory that is
not ours or not safe, no environment, no client registered to run this install, a client
that reports the server failing, a page read that fails, a registration at another scope
than user (a local-scope one for the home directory hides ours), a Codex registration with
`enabled = false` (no session starts it), and a daily update that has failed for more than a
day past due (so the install is stuck at its version) — or failed at all while the last
success is dated in the future, since a clock set back hides how long. Each is a
`Problem` carrying the command that fixes it — the install's own `kinetis-docs`, with the
pages directory a registration has; for a source install, its checkout's
`nox -s setup_from_source`; with nothing installed, the README's command in a clone — and
any makes the exit status 1. An HTTP registration
of the name is shown as its URL and the names of its headers, never their values. Nothing
installed is no problem for a user of the HTTP route alone: with no stdio registration, a
client registering the route (as `kinetis-docs`, or as `kinetis-docs-http`, the name the
route's page gives it) needs no install, and status says so and exits 0. The
report's types, and the report as text, are `status_report.py`'s.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from kinetis_mcp_docs.installer.clients.base import HTTP_SERVER_NAME, SERVER_NAME, Client
from kinetis_mcp_docs.installer.clients.known import CLIENTS
from kinetis_mcp_docs.installer.clients.registration import Registration
from kinetis_mcp_docs.installer.clients.scope import other_scope
from kinetis_mcp_docs.installer.commands.status_report import (
    ClientStatus,
    EnvironmentStatus,
    HeldCopy,
    InstallStatus,
    PageRead,
    Problem,
    Status,
)
from kinetis_mcp_docs.installer.envs.interpreter import interpreter_problem
from kinetis_mcp_docs.installer.envs.links import current_environment, previous_environment
from kinetis_mcp_docs.installer.envs.metadata import environment_version
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.install_dir.advice import (
    checkout_present,
    delete_and_install,
    in_checkout,
    install_here,
    kinetis_docs,
    setup_with_new_python,
    with_new_python,
)
from kinetis_mcp_docs.installer.install_dir.ownership import (
    Found,
    Refusal,
    ownership,
    resolve_directory,
)
from kinetis_mcp_docs.installer.install_dir.package_source import PackageSource, read_source
from kinetis_mcp_docs.installer.install_dir.pages import (
    Pages,
    held_pages,
    holds_copy,
    registration_pages,
    served_directory,
)
from kinetis_mcp_docs.installer.install_dir.safety import (
    WRITABLE_FIX,
    cannot_write,
    install_problem,
)
from kinetis_mcp_docs.installer.install_dir.throttle import (
    WINDOW_SECONDS,
    is_due,
    read_failure,
    read_last_check,
)
from kinetis_mcp_docs.installer.layout import DIR_ENVIRONMENT_VARIABLE, MARKER_NAME, InstallLayout
from kinetis_mcp_docs.installer.server_check.verification import (
    INDEX_URI,
    READ_FAILED,
    ServerCheckFailed,
    read_hint,
    verify_server,
)

# A day past due, with a failure recorded since: the starts of that day tried and failed.
OVERDUE_SECONDS = 2 * WINDOW_SECONDS
# The command of each client, by the label a report names it with.
_EXECUTABLES = {client.label: client.executable for client in CLIENTS}


def gather_status(environ: Mapping[str, str]) -> Status:
    """Examine the install directory and both clients; see the module's docstring."""
    root = resolve_directory(environ)
    problems: list[Problem] = []
    checkout = _checkout(root)
    stranded = _stranded(root)
    found = ownership(root)
    # A directory that is not ours is refused by its own setup too: a client running it is
    # mended by what mends the directory.
    unowned = _refusal_fix(root, found) if isinstance(found, Refusal) else None
    clients = [
        _client_status(
            client, root, environ, problems, checkout=checkout, stranded=stranded, unowned=unowned
        )
        for client in CLIENTS
    ]
    over_http = _over_http(clients) if found in (Found.ABSENT, Found.EMPTY) else []
    install = _install_status(root, environ, clients, problems, stranded, over_http=over_http)
    return Status(install, clients, problems)


def _over_http(clients: list[ClientStatus]) -> list[str]:
    """With nothing installed and no client running a stdio install: each client's HTTP
    registration of the route, under `kinetis-docs` or the name the HTTP route's page
    gives it, `kinetis-docs-http`. A user of the route alone needs no install."""
    if any(client.command is not None for client in clients):
        return []
    found = [
        f"{client.client}'s {SERVER_NAME} is {client.description}"
        for client in clients
        if client.registered and client.url is not None
    ]
    for client in CLIENTS:
        cli = client.cli_on_path()
        if cli is None:
            continue
        try:
            registration = client.registration(cli, HTTP_SERVER_NAME)
        except InstallerError:
            continue  # a CLI that cannot answer shows no route's user
        if registration is not None and registration.url is not None:
            found.append(f"{client.label}'s {HTTP_SERVER_NAME} is {registration.describe()}")
    return found


def _stranded(root: Path) -> str | None:
    """Why the environment `current` points at cannot run (its Python is gone), or None."""
    if not isinstance(ownership(root), Found):
        return None
    current = current_environment(InstallLayout(root))
    return None if current is None else interpreter_problem(current)


def _checkout(root: Path) -> Path | None:
    """The checkout `root` is a source install of, for the commands status names."""
    if not isinstance(ownership(root), Found):
        return None
    try:
        source = read_source(InstallLayout(root))
    except InstallerError:
        return None  # reported with the install directory
    return None if source is None else source.checkout()


def _client_status(
    client: Client,
    root: Path,
    environ: Mapping[str, str],
    problems: list[Problem],
    *,
    checkout: Path | None,
    stranded: str | None,
    unowned: str | None,
) -> ClientStatus:
    cli = client.cli_on_path()
    if cli is None:
        return ClientStatus(client.label, None)
    try:
        registration = client.registration(cli)
    except InstallerError as error:
        problems.append(
            Problem(error.message, f"check that `{client.check_hint()}` works in this shell")
        )
        return ClientStatus(client.label, cli, error=error.message)
    if registration is None:
        return ClientStatus(client.label, cli)
    scoped = other_scope(client, registration)
    if scoped is not None:
        problems.append(Problem(scoped.what, f"{scoped.remove}; then run status again"))
    # Codex's `enabled = false`: the entry is kept, and no session ever starts it.
    disabled = registration.settings.get("enabled") is False
    if disabled:
        problems.append(
            Problem(
                f"{client.label} has {SERVER_NAME} disabled (`enabled = false` in its entry), "
                "so no session starts it",
                f"set `enabled = true` in [mcp_servers.{SERVER_NAME}] of {client.config_file}, "
                "or delete that line; then run status again",
            )
        )
    runs_here = registration.runs_from(root)
    other = registration.install_directory
    layout = InstallLayout(root)
    pages = registration_pages(registration.pages, layout)
    setup = _setup(client, pages, root, checkout)
    reinstall = f"{setup} reinstalls and registers it again"
    if stranded is not None:
        # Its own setup cannot start either: a clone's, with the Python there is now.
        reinstall = _with_new_python(
            root, checkout, [(client.label, _arguments(client.arguments, pages, checkout))]
        )
    if unowned is not None:
        reinstall = unowned
    read = None
    if runs_here:
        read = _read_page(
            client,
            registration,
            environ,
            problems,
            served=served_directory(registration.pages, layout),
            setup=setup,
            only_reinstall=stranded is not None or unowned is not None,
            reinstall=reinstall,
            from_checkout=checkout is not None,
        )
    status = registration.status
    if runs_here and status is not None and ("Connected" not in status or "Failed" in status):
        problems.append(
            Problem(
                f"{client.label} reports {SERVER_NAME} as {status!r}, not Connected",
                f"`{client.check_hint()}` says why; {reinstall}",
            )
        )
    return ClientStatus(
        client.label,
        cli,
        registered=True,
        command=registration.argv if registration.is_stdio else None,
        recorded_variables=sorted(registration.env),
        install_directory=None if other is None else os.fspath(other),
        runs_this_install=runs_here,
        pages=registration.pages,
        pages_held=os.fspath(pages.directory)
        if runs_here and pages.held and pages.directory
        else None,
        pages_from=pages.describe(layout) if runs_here else None,
        reported_status=status,
        scope=registration.scope,
        disabled=disabled,
        transport=registration.transport or None,
        url=registration.url,
        headers=registration.headers,
        description=registration.describe(),
        page_read=read,
    )


def _setup(client: Client, pages: Pages, root: Path, checkout: Path | None) -> str:
    """The setup that registers this install again as it is, quoted for a sentence: with
    the pages it serves, and for a source install from its checkout (its own setup would
    ask an index)."""
    if checkout is None:
        return f"`{kinetis_docs(root, 'setup', *client.arguments, pages=pages.setting())}`"
    arguments, settings = pages.session_arguments(checkout)
    return in_checkout(checkout, root, *client.arguments, *arguments, settings=settings)


def _read_page(
    client: Client,
    registration: Registration,
    environ: Mapping[str, str],
    problems: list[Problem],
    *,
    served: Path | None,
    setup: str,
    only_reinstall: bool,
    reinstall: str,
    from_checkout: bool,
) -> PageRead:
    """Setup's four messages through the registered command, as `client` starts it.

    `served` is the directory its pages come from (None: the Kinetis repository), and
    `setup` what registers it again so; `reinstall` is the fix that installs and registers
    it again; with `only_reinstall` (the environment's Python is gone, or the directory is
    not ours, so `setup` cannot run or refuses) it is the fix whatever the server said. A
    pages directory that has gone from a source install (its checkout moved, read in
    place) is mended by the checkout's command in the clone's new place, as `setup` says."""
    env = client.launch_environment(environ, registration.env)
    try:
        version = verify_server(registration.argv, env)
    except ServerCheckFailed as failure:
        detail = failure.account()
        # A page the server could not read, or a pages directory that is gone, which stops
        # the server at its start; any other failure is not the pages' doing.
        pages_failed = served is not None and not (
            served.is_dir() and os.access(served, os.R_OK | os.X_OK)
        )
        gone = served is not None and not served.exists()
        if not only_reinstall and from_checkout and gone:
            fix = f"The pages directory {served} is gone: run {setup}"
        elif not only_reinstall and (failure.problem.code == READ_FAILED or pages_failed):
            fix = f"{read_hint(served)}, then run {setup}"
        else:
            fix = reinstall
        problems.append(
            Problem(f"{client.label} cannot read pages through its {SERVER_NAME}: {detail}", fix)
        )
        file = None if failure.stderr_file is None else os.fspath(failure.stderr_file)
        return PageRead(ok=False, detail=detail, stderr_file=file)
    return PageRead(ok=True, detail=f"kinetis-mcp-docs {version} served {INDEX_URI}")


def _install_status(
    root: Path,
    environ: Mapping[str, str],
    clients: list[ClientStatus],
    problems: list[Problem],
    stranded: str | None,
    *,
    over_http: list[str],
) -> InstallStatus:
    chosen_by = DIR_ENVIRONMENT_VARIABLE if environ.get(DIR_ENVIRONMENT_VARIABLE) else "default"
    found = ownership(root)
    if found is not Found.OURS:
        return _no_install(root, chosen_by, found, clients, problems, over_http=over_http)
    layout = InstallLayout(root)
    unsafe = install_problem(layout)
    if unsafe is not None:
        reason, fix = unsafe
        problems.append(Problem(reason, fix))
    unwritable = cannot_write(layout)
    if unwritable is not None:
        problems.append(
            Problem(
                f"{unwritable}, so no update can happen: neither a client start's, nor "
                "`update`, nor setup",
                f"{WRITABLE_FIX} (then run setup there)",
            )
        )
    source = _source(layout, problems)
    checkout = None if source is None else source.checkout()
    current = current_environment(layout)
    if current is None:
        problems.append(
            Problem(
                f"{layout.current} points at no environment",
                _setup_either(root, checkout, clients) + " again",
            )
        )
    elif stranded is not None:
        running = [client for client in clients if client.runs_this_install]
        chosen = running or [ClientStatus("Claude Code", None), ClientStatus("Codex", None)]
        problems.append(
            Problem(
                f"The environment {layout.current} points at, {current}, cannot run: {stranded}",
                _with_new_python(
                    root, checkout, [(c.client, _checkout_arguments(c, checkout)) for c in chosen]
                ),
            )
        )
    if not any(client.runs_this_install for client in clients):
        problems.append(_none_registered(root, checkout, clients))
    previous = previous_environment(layout)
    now = time.time()
    last = read_last_check(layout.last_update_check)
    failure = read_failure(layout.last_update_failure)
    # A last check from the future (the clock was set back after it) orders nothing: a
    # failure recorded since carries an earlier time, and would otherwise be taken for one
    # an update has succeeded since.
    if failure is not None and last is not None and failure[0] < last <= now:
        failure = None  # an update has succeeded since
    due = last is None or is_due(last, now)
    if failure is not None and last is not None:
        stuck = _stuck(last, now, failure)
        if stuck is not None:
            problems.append(Problem(stuck, _overdue_fix(root, checkout, clients)))
    if due or last is None:
        next_check: str | None = None
    else:
        next_check = _utc(last + WINDOW_SECONDS)
    return InstallStatus(
        os.fspath(root),
        chosen_by,
        "installed",
        f"its {MARKER_NAME} marker proves it an install of this tool",
        current=_environment(current, stranded),
        previous=_environment(previous, _cannot_run(previous)),
        last_update_check=None if last is None else _utc(last),
        next_update_check=next_check,
        last_failed_update=None if failure is None else _utc(failure[0]),
        last_failure=None if failure is None else failure[1],
        package_source=None if source is None else source.describe(),
        source_checkout=None if checkout is None else os.fspath(checkout),
        source_checkout_gone=None if checkout is None else not checkout_present(checkout),
        wheelhouse_held=None if source is None else source.copied_from is not None,
        pages_copy=_held_copy(layout),
    )


def _no_install(
    root: Path,
    chosen_by: str,
    found: Found | Refusal,
    clients: list[ClientStatus],
    problems: list[Problem],
    *,
    over_http: list[str],
) -> InstallStatus:
    """The install directory when it holds no install: not ours, or nothing there, which
    is no problem for a user of the HTTP route alone (`over_http`)."""
    if isinstance(found, Refusal):
        problems.append(
            Problem(
                f"{root} is not an install of this tool: {found.reason}", _refusal_fix(root, found)
            )
        )
        return InstallStatus(os.fspath(root), chosen_by, "not-ours", found.reason)
    detail = "it does not exist" if found is Found.ABSENT else "it is empty"
    if not over_http:
        problems.append(Problem(f"Nothing is installed in {root}", _install_fix(root, clients)))
    return InstallStatus(os.fspath(root), chosen_by, found.value, detail, over_http=over_http)


def _held_copy(layout: InstallLayout) -> HeldCopy | None:
    """The install's copy of the pages: where, made from where, and whether that is there."""
    if not holds_copy(layout):
        return None
    origin = held_pages(layout)
    return HeldCopy(
        os.fspath(layout.pages),
        None if origin is None else os.fspath(origin),
        origin is not None and origin.is_dir(),
    )


def _stuck(last: float, now: float, failure: tuple[float, str]) -> str | None:
    """Why a recorded failure is a problem, or None while it may be a passing one: the
    update has failed for more than a day past due, or for as long as the clock hides.

    A last check in the future cannot say how long the updates have failed (the clock was
    set back after it), so the failure counts at once rather than once the clock has
    caught up, which may be months: the fix, an update, records the time anew.
    """
    tried = f"the last client start that tried, at {_utc(failure[0])}, failed: "
    reason = failure[1].rstrip(".")
    if last > now:
        return (
            f"The last successful update check, at {_utc(last)}, is in the future (the clock "
            "was turned back after it), so how long updates have failed cannot be told: "
            f"{tried}{reason}"
        )
    if now - last > OVERDUE_SECONDS:
        return (
            f"The daily update has not succeeded since {_utc(last)}, more than a day past "
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


def _source(layout: InstallLayout, problems: list[Problem]) -> PackageSource | None:
    try:
        return read_source(layout)
    except InstallerError as error:
        problems.append(Problem(error.message, _setup_either(layout.root, None, [])))
        return None


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


def _environment(env: Path | None, cannot_run: str | None = None) -> EnvironmentStatus | None:
    if env is None:
        return None
    return EnvironmentStatus(os.fspath(env), environment_version(env), cannot_run)


def _cannot_run(env: Path | None) -> str | None:
    return None if env is None else interpreter_problem(env)


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


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")
