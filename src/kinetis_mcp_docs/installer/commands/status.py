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
success is dated in the future, since a clock set back hides how long. This module records
what it finds; `status_problems.problems` decides from that what is a `Problem`, each
carrying the command that fixes it, and any makes the exit status 1. An HTTP registration
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
from pathlib import Path

from ..clients.base import HTTP_SERVER_NAME, SERVER_NAME, Client
from ..clients.known import CLIENTS
from ..clients.registration import Registration
from ..envs.interpreter import interpreter_problem
from ..envs.links import current_environment, previous_environment
from ..envs.metadata import environment_version
from ..errors import InstallerError
from ..install_dir.advice import checkout_present
from ..install_dir.ownership import (
    Found,
    Refusal,
    ownership,
    resolve_directory,
)
from ..install_dir.package_source import PackageSource, read_source
from ..install_dir.pages import (
    held_pages,
    holds_copy,
    registration_pages,
    served_directory,
)
from ..install_dir.safety import cannot_write, install_problem
from ..install_dir.throttle import (
    WINDOW_SECONDS,
    is_due,
    read_failure,
    read_last_check,
)
from ..layout import DIR_ENVIRONMENT_VARIABLE, MARKER_NAME, InstallLayout
from ..server_check.verification import (
    INDEX_URI,
    READ_FAILED,
    ServerCheckFailed,
    read_hint,
    verify_server,
)
from .status_problems import (
    ClientFindings,
    Context,
    DirectoryFindings,
    FailedRead,
    problems,
)
from .status_report import (
    ClientStatus,
    EnvironmentStatus,
    HeldCopy,
    InstallStatus,
    PageRead,
    Status,
    utc,
)


def gather_status(environ: Mapping[str, str]) -> Status:
    """Examine the install directory and both clients; see the module's docstring."""
    root = resolve_directory(environ)
    checkout = _checkout(root)
    stranded = _stranded(root)
    context = Context(root, ownership(root), checkout, stranded)
    found = [_client_findings(client, environ, context) for client in CLIENTS]
    clients = [client.report for client in found]
    over_http = _over_http(clients) if context.found in (Found.ABSENT, Found.EMPTY) else []
    install, directory = _install_status(root, environ, context.stranded, over_http=over_http)
    return Status(install, clients, problems(context, found, directory))


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


def _client_findings(
    client: Client, environ: Mapping[str, str], context: Context
) -> ClientFindings:
    """What `client`'s CLI reports, and, for a registration that runs this install, one page
    read through it."""
    cli = client.cli_on_path()
    if cli is None:
        return ClientFindings(client, ClientStatus(client.label, None))
    try:
        registration = client.registration(cli)
    except InstallerError as error:
        return ClientFindings(client, ClientStatus(client.label, cli, error=error.message))
    if registration is None:
        return ClientFindings(client, ClientStatus(client.label, cli))
    runs_here = registration.runs_from(context.root)
    other = registration.install_directory
    layout = InstallLayout(context.root)
    pages = registration_pages(registration.pages, layout)
    read, failed = None, None
    if runs_here:
        served = served_directory(registration.pages, layout)
        read, failed = _read_page(client, registration, environ, served)
    report = ClientStatus(
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
        reported_status=registration.status,
        scope=registration.scope,
        # Codex's `enabled = false`: the entry is kept, and no session ever starts it.
        disabled=registration.settings.get("enabled") is False,
        transport=registration.transport or None,
        url=registration.url,
        headers=registration.headers,
        description=registration.describe(),
        page_read=read,
    )
    return ClientFindings(client, report, registration, pages, failed)


def _read_page(
    client: Client, registration: Registration, environ: Mapping[str, str], served: Path | None
) -> tuple[PageRead, FailedRead | None]:
    """Setup's four messages through the registered command, as `client` starts it; when
    they fail, what was true then of `served`, the directory its pages come from (None: the
    Kinetis repository)."""
    env = client.launch_environment(environ, registration.env)
    try:
        version = verify_server(registration.argv, env)
    except ServerCheckFailed as failure:
        detail = failure.account()
        # A page the server could not read, or a pages directory that is gone, which stops
        # the server at its start; any other failure is not the pages' doing.
        failed = FailedRead(
            detail,
            served,
            read_failed=failure.problem.code == READ_FAILED,
            pages_unreadable=served is not None
            and not (served.is_dir() and os.access(served, os.R_OK | os.X_OK)),
            pages_gone=served is not None and not served.exists(),
            hint=read_hint(served),
        )
        file = None if failure.stderr_file is None else os.fspath(failure.stderr_file)
        return PageRead(ok=False, detail=detail, stderr_file=file), failed
    return PageRead(ok=True, detail=f"kinetis-mcp-docs {version} served {INDEX_URI}"), None


def _install_status(
    root: Path,
    environ: Mapping[str, str],
    stranded: str | None,
    *,
    over_http: list[str],
) -> tuple[InstallStatus, DirectoryFindings]:
    chosen_by = DIR_ENVIRONMENT_VARIABLE if environ.get(DIR_ENVIRONMENT_VARIABLE) else "default"
    found = ownership(root)
    if found is not Found.OURS:
        directory = DirectoryFindings(found, over_http)
        return _no_install(root, chosen_by, found, over_http=over_http), directory
    layout = InstallLayout(root)
    unsafe = install_problem(layout)
    unwritable = cannot_write(layout)
    source, unreadable_source = _source(layout)
    checkout = None if source is None else source.checkout()
    current = current_environment(layout)
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
    if due or last is None:
        next_check: str | None = None
    else:
        next_check = utc(last + WINDOW_SECONDS)
    install = InstallStatus(
        os.fspath(root),
        chosen_by,
        "installed",
        f"its {MARKER_NAME} marker proves it an install of this tool",
        current=_environment(current, stranded),
        previous=_environment(previous, _cannot_run(previous)),
        last_update_check=None if last is None else utc(last),
        next_update_check=next_check,
        last_failed_update=None if failure is None else utc(failure[0]),
        last_failure=None if failure is None else failure[1],
        package_source=None if source is None else source.describe(),
        source_checkout=None if checkout is None else os.fspath(checkout),
        source_checkout_gone=None if checkout is None else not checkout_present(checkout),
        wheelhouse_held=None if source is None else source.copied_from is not None,
        pages_copy=_held_copy(layout),
    )
    directory = DirectoryFindings(
        found,
        over_http,
        unsafe=unsafe,
        unwritable=unwritable,
        unreadable_source=unreadable_source,
        checkout=checkout,
        current=current,
        last=last,
        now=now,
        failure=failure,
    )
    return install, directory


def _no_install(
    root: Path,
    chosen_by: str,
    found: Found | Refusal,
    *,
    over_http: list[str],
) -> InstallStatus:
    """The install directory when it holds no install: not ours, or nothing there, which
    is no problem for a user of the HTTP route alone (`over_http`)."""
    if isinstance(found, Refusal):
        return InstallStatus(os.fspath(root), chosen_by, "not-ours", found.reason)
    detail = "it does not exist" if found is Found.ABSENT else "it is empty"
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


def _source(layout: InstallLayout) -> tuple[PackageSource | None, str | None]:
    """Where the install's packages come from, or why that record cannot be read."""
    try:
        return read_source(layout), None
    except InstallerError as error:
        return None, error.message


def _environment(env: Path | None, cannot_run: str | None = None) -> EnvironmentStatus | None:
    if env is None:
        return None
    return EnvironmentStatus(os.fspath(env), environment_version(env), cannot_run)


def _cannot_run(env: Path | None) -> str | None:
    return None if env is None else interpreter_problem(env)
