"""`kinetis-docs setup [codex]`: own the install directory, install, verify, register.

The steps run in the order the contract gives, each announced on one line of stdout;
pip's output goes to stderr. Nothing is written before the prerequisites are checked and
the directory is proven ours (and safe: `safety.install_problem`). The install takes
the same build-check-switch path as the daily update (`envs/candidate.py`), under the same
lock, and writes the timestamp only when it succeeded — so the verification spawn, inside
the update window, neither takes the lock nor checks for an update. The verification and
the registration run inside the candidate's block, the lock still held (so that an
uninstall, which removes the directory under it, either sees the registration or comes
first): the new environment's byte-compile runs beside them, and setup returns once it has
finished, the lock released before it waits.

`KINETIS_MCP_DOCS_PAGES=DIR` makes the registered command serve its pages from `DIR`
(`--docs-dir`, absolute), and the verification reads its page from there: setup then needs
no network beyond the package index. `KINETIS_MCP_DOCS_PAGES_COPY=DIR` has the install hold
a copy of them instead, which the registered command serves without naming it, so that the
install keeps serving when DIR moves or goes (`install_dir/pages.py`); a setup for the
Kinetis repository removes such a copy. A source install, whose packages come from a
checkout's wheelhouse alone, holds a copy of that wheelhouse too (`install_dir/wheelhouse.py`).

The install's own setup, run over a source install from a shell that names no package
source, would ask an index that has no such package: it is refused among the
prerequisites, naming the checkout's command that installs it again.

A failure after the directory was claimed is one line saying what failed, what to try,
where the server's stderr is, and what was left installed; Ctrl-C is the same, with the
shell's exit status for it (130), and so are SIGTERM (143) and SIGHUP (129), which the
command raises as Ctrl-C (`children.terminations_raised`).

The registration it will replace is read among the prerequisites, before anything is
written: a local-scope `kinetis-docs` for the home directory, which would hide the
user-scope one setup adds, is refused there.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..clients.base import SERVER_NAME, Client
from ..clients.known import client_named
from ..clients.registration import Registration
from ..clients.scope import hiding_registration, other_scope
from ..envs.build import Interpreter, probe_interpreter
from ..envs.candidate import MANUAL_DEADLINE_SECONDS, candidate
from ..envs.pip import PipRun
from ..errors import (
    InstallerError,
    interrupted_exit_code,
    interruption,
)
from ..install_dir.advice import in_checkout, kinetis_docs
from ..install_dir.claim import Claim, claim_directory, roll_back
from ..install_dir.files import write_atomic
from ..install_dir.lock import update_lock
from ..install_dir.ownership import Found, resolve_directory
from ..install_dir.package_source import (
    SOURCE_VARIABLES,
    PackageSource,
    read_source,
    record_source,
)
from ..install_dir.pages import (
    Pages,
    chosen_pages,
    directory_setting,
    drop_pages,
    hold_pages,
    served_directory,
)
from ..install_dir.safety import inspect_directory
from ..install_dir.scratch import emptied_scratch
from ..install_dir.throttle import record_success
from ..install_dir.wheelhouse import hold_wheelhouse
from ..layout import REQUIREMENT, InstallLayout
from ..names import PAGES_ENVIRONMENT_VARIABLE
from ..server_check.verification import (
    READ_FAILED,
    ServerCheckFailed,
    read_hint,
    verify_server,
)

# Byte-compiling a fresh environment takes a second or two; past this, leave the rest to
# first imports rather than keep the user waiting.
COMPILE_TIMEOUT_SECONDS = 60.0
# The page the verification reads, in a pages directory.
INDEX_PAGE = "index.md"


@dataclass(frozen=True)
class SetupResult:
    """What setup did, for the caller's last line."""

    client: Client
    root: Path
    version: str
    pages: Pages

    @property
    def pages_shown(self) -> str | None:
        """Where the pages come from, for the last line; None for the Kinetis repository."""
        if self.pages.directory is None:
            return None
        return self.pages.describe(InstallLayout(self.root))


def run_setup(
    client_name: str | None,
    *,
    say: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> SetupResult:
    """Install into the install directory and register with one client.

    `say` receives one line per step. Raises `InstallerError` on any expected failure, and
    on Ctrl-C (exit status 130) or SIGTERM or SIGHUP, each saying what was left installed.
    """
    environ = dict(os.environ if environ is None else environ)
    client = client_named(client_name)

    say(
        f"Checking prerequisites: the {client.label} CLI and its {SERVER_NAME} "
        "registration, and Python's venv support"
    )
    try:
        cli = client.find_cli()
        interpreter = check_python()
        root = resolve_directory(environ)
        layout = InstallLayout(root)
        pages = chosen_pages(environ, layout)
        found = inspect_directory(root)
        if found is Found.OURS:
            refuse_source_install(layout, environ, client, pages)
        existing = existing_registration(client, cli)
    except KeyboardInterrupt as error:
        raise InstallerError(
            f"{interruption(error)}; nothing was written.", interrupted_exit_code(error)
        ) from None
    argv = layout.start_argv(None if pages.held else pages.directory)
    registered_env = client.registered_environment(environ)
    say(f"Installing {REQUIREMENT} into {root}")
    claim = claim_directory(root, found)
    installed: str | None = None  # the version, once `current` is the new environment
    verified = registered = False
    served = served_directory(None if pages.held else _as_str(pages.directory), layout)
    try:
        deadline = time.monotonic() + MANUAL_DEADLINE_SECONDS
        with installing(
            layout,
            deadline=deadline,
            say=say,
            environ=environ,
            pages=pages,
            interpreter=interpreter,
        ) as installed:
            say(
                f"Installed version {installed}; verifying it through the command to register "
                f"(a page from {pages.describe(layout)})"
            )
            version = verify_server(argv, client.launch_environment(environ, registered_env))
            verified = True
            register_replacing(
                client, cli, argv, registered_env, existing=existing, root=root, say=say
            )
            registered = True
    except BaseException as error:
        if verified:
            # The install stands; only the registration (or the compile's wait) was cut.
            if isinstance(error, KeyboardInterrupt):
                raise _interrupted_registering(error, client, root, registered=registered) from None
            raise
        # A failed first install leaves exactly what was found (see claim.py).
        if claim.first_install:
            roll_back(claim)
        left = _left_installed(claim, switched=installed is not None)
        if isinstance(error, KeyboardInterrupt):
            stopped = interruption(error)
            raise InstallerError(f"{stopped}. {left}", interrupted_exit_code(error)) from None
        if isinstance(error, InstallGone):
            raise  # what was found is gone: nothing is left as it was
        if isinstance(error, InstallerError):
            raise InstallerError(
                f"{_what_failed(error, served)} {left}", error.exit_code
            ) from error
        raise
    return SetupResult(client, root, version, pages)


def _as_str(path: Path | None) -> str | None:
    return None if path is None else os.fspath(path)


def refuse_source_install(
    layout: InstallLayout, environ: Mapping[str, str], client: Client, pages: Pages
) -> None:
    """Refuse the install's own setup over a source install, before anything is written,
    when this shell names no package source: pip would ask an index, which has no such
    package. The checkout's command installs it again (its session sets the source)."""
    try:
        source = read_source(layout)
    except InstallerError:
        return  # unreadable: setup records it again
    checkout = None if source is None else source.checkout()
    if checkout is None or any(environ.get(name) for name in SOURCE_VARIABLES):
        return
    arguments, settings = pages.session_arguments(checkout)
    command = in_checkout(checkout, layout.root, *client.arguments, *arguments, settings=settings)
    raise InstallerError(
        f"{layout.root} is a source install of {checkout}: its packages come from that "
        "checkout's wheelhouse, which no package index has, so its own setup cannot install "
        f"it again. Run {command} instead. Nothing was written."
    )


def existing_registration(client: Client, cli: str) -> Registration | None:
    """The registration setup will replace, read before anything is written.

    A local-scope `kinetis-docs` for the home directory is refused: it hides the user-scope
    registration setup adds, whose read-back would then show the other one.
    """
    existing = client.registration(cli)
    hiding = hiding_registration(client, existing)
    if hiding is not None:
        raise InstallerError(
            f"{hiding.what}. Remove it with {hiding.remove}, then run setup again. Nothing "
            "was written."
        )
    return existing


def register_replacing(
    client: Client,
    cli: str,
    argv: list[str],
    env: Mapping[str, str],
    *,
    existing: Registration | None,
    root: Path,
    say: Callable[[str], None],
) -> None:
    """Replace the registration `existing` with the verified command, saying what it was
    and what of it is dropped, before the client is asked: a failure after the removal
    would leave nothing to read it from."""
    say(f"Registering {SERVER_NAME} with {client.label}")
    turned_on = None
    if existing is not None and existing.settings.get("enabled") is False:
        turned_on = (
            f"{client.label}'s {SERVER_NAME} was turned off by hand (`enabled = false`); "
            "registering it again turns it on"
        )
    for notice in (
        replacement_notice(client, existing, root),
        turned_on,
        dropped_settings_notice(client, existing),
    ):
        if notice is not None:
            say(notice)
    client.register(cli, argv, env)


def dropped_settings_notice(client: Client, existing: Registration | None) -> str | None:
    """The settings a user added to the registration by hand that replacing it drops, in
    one line with their values (a credential's by name only), or None."""
    dropped = client.dropped_settings(existing) if existing is not None else []
    if not dropped:
        return None
    return (
        f"{client.label}'s {SERVER_NAME} has settings added by hand that re-registering "
        f"drops: {'; '.join(dropped)}. Add them back to its entry in {client.config_file}"
    )


def _interrupted_registering(
    error: KeyboardInterrupt, client: Client, root: Path, *, registered: bool
) -> InstallerError:
    """Ctrl-C (or SIGTERM, SIGHUP) once the install was verified: what it left, with the
    shell's exit status."""
    if registered:
        left = (
            f"the install in {root} and {client.label}'s registration are complete (what "
            "was not byte-compiled is compiled when first imported)"
        )
    else:
        left = (
            f"the verified install stays current in {root}, but {client.label} may be left "
            f"with no {SERVER_NAME} registration: run setup again"
        )
    return InstallerError(f"{interruption(error)}; {left}.", interrupted_exit_code(error))


def pages_directory(environ: Mapping[str, str]) -> Path | None:
    """`KINETIS_MCP_DOCS_PAGES` as an absolute directory holding the index page, or None
    (`pages.directory_setting`): refused before anything is written when it names none."""
    return directory_setting(environ, PAGES_ENVIRONMENT_VARIABLE)


def replacement_notice(client: Client, existing: Registration | None, root: Path) -> str | None:
    """What a user should know about the registration setup is about to replace, if anything."""
    if existing is None or existing.runs_from(root):
        return None
    scoped = other_scope(client, existing)
    if scoped is not None:
        return (
            f"{scoped.what}; adding the user-scope one beside it (remove the other with "
            f"{scoped.remove})"
        )
    replaced = f"{client.label}'s {SERVER_NAME}"
    other = existing.install_directory
    if not existing.is_stdio:
        return f"{replaced} was {existing.describe()}; replacing it"
    if other is None:
        return f"{replaced} ran another command, {existing.describe()}; replacing it"
    if not os.path.lexists(other):
        return f"{replaced} ran the install in {other}, which no longer exists; replacing it"
    uninstall = kinetis_docs(other, "uninstall", *client.arguments)
    return (
        f"{replaced} ran the install in another directory, {other}; replacing it. That "
        f"directory stays: remove it with `{uninstall}`"
    )


def _what_failed(error: InstallerError, pages: Path | None) -> str:
    """The failure, with what to try when the server could not read its page."""
    if not isinstance(error, ServerCheckFailed):
        return error.message
    hint = ""
    if error.problem.code == READ_FAILED:
        hint = f" {read_hint(pages)}, and run setup again."
    return f"{error.failure}: {error.account()}{hint}"


def _left_installed(claim: Claim, *, switched: bool) -> str:
    """What a failed setup left in the install directory, in one sentence."""
    if claim.first_install:
        if claim.created is not None:
            return f"Nothing was left installed: {claim.created} was removed again."
        return f"Nothing was left installed: {claim.root} is empty again."
    if switched:
        return (
            f"The new environment stays current in {claim.root}, the one before it kept as "
            "previous; no registration was changed."
        )
    return f"The install in {claim.root} is as it was, and no registration was changed."


class InstallGone(InstallerError):
    """The install directory was removed (by an uninstall) while setup waited for its lock."""


def check_python() -> Interpreter:
    """That this Python can create an isolated environment and install into it; what it
    builds one with, for the install to use."""
    if importlib.util.find_spec("venv") is None:
        raise InstallerError(
            "This Python cannot create virtual environments (its venv module is missing). "
            "Install your Python's venv support (on Debian and Ubuntu: python3-venv) and "
            "run setup again."
        )
    interpreter = probe_interpreter()
    if not os.access(interpreter.base, os.X_OK):
        raise InstallerError(
            f"The base interpreter of this Python, {interpreter.base}, cannot be run; run "
            "setup with another Python 3.10 or later."
        )
    if not interpreter.own_pip and (importlib.util.find_spec("ensurepip") is None):
        raise InstallerError(
            "This Python has neither pip 22.3 or later nor ensurepip, so it cannot install "
            "into a new environment. Install your Python's venv support (on Debian and "
            "Ubuntu: python3-venv) and run setup again."
        )
    return interpreter


@contextlib.contextmanager
def installing(
    layout: InstallLayout,
    *,
    deadline: float,
    say: Callable[[str], None],
    environ: Mapping[str, str],
    interpreter: Interpreter,
    pages: Pages | None = None,
) -> Iterator[str]:
    """Under the lock: write the requirement, build, check, switch, record the time and
    where the packages came from, and hold the `pages` asked for; then run the block
    (verify, register) with the new environment serving, and release the lock. Yields the
    installed version. The environment is made with `interpreter`, what setup's
    prerequisites found (`check_python`).

    pip runs in `environ`, whose pip variables are recorded as the install's package source
    (`package_source.py`), for every later update to look where this install did; a source
    install's wheelhouse is copied into the install first, and pip reads the copy
    (`wheelhouse.py`). The environment serving before (on a re-run) stays untouched until
    the switch, and stays as `previous` after it. The new environment's byte-compile runs
    beside the check and the block; leaving the block waits for it, or stops it on any
    exception (`candidate.py`).
    """
    with contextlib.ExitStack() as locked:
        locked.enter_context(
            update_lock(
                layout.lock, on_wait=lambda: say(f"Waiting for another update of {layout.root}")
            )
        )
        if not layout.marker.exists():
            # An uninstall that held the lock meanwhile removed the directory, the marker
            # this setup claimed it with included.
            raise InstallGone(
                f"{layout.root} was removed while setup waited for another update of it (an "
                "uninstall ran meanwhile); nothing was installed. Run setup again to install."
            )
        write_requirements(layout)
        source = hold_wheelhouse(layout, PackageSource.of(environ))
        with candidate(
            layout,
            ["-r", os.fspath(layout.requirements)],
            deadline=deadline,
            compile_wait=COMPILE_TIMEOUT_SECONDS,
            pip=PipRun(environ=source.pip_environment(environ), scratch=emptied_scratch(layout)),
            interpreter=interpreter,
        ) as new:
            version = new.check(deadline=deadline)
            new.switch()
            record_success(layout, time.time())
            record_source(layout, source)
            if pages is not None:
                _hold(layout, pages, say)
            # Verified and registered under the lock, so that an uninstall, which removes
            # the directory under it, either sees the registration or removes the install
            # before it is made (a setup waiting behind it then finds the marker gone). A
            # client start meanwhile takes no lock: the time just recorded makes no update
            # due. Released before the compile is waited for.
            try:
                yield version
            finally:
                locked.close()


def _hold(layout: InstallLayout, pages: Pages, say: Callable[[str], None]) -> None:
    """Make the install hold the pages asked for: a copy of their directory (kept as it is
    when that has gone since it was copied), or, for the Kinetis repository, none, saying
    what the registrations that served the copy serve from now on. A directory read in
    place leaves the install's copy to the registrations that serve it."""
    if pages.held and pages.directory is not None:
        if not pages.directory.is_dir():
            say(f"{pages.directory} is gone: keeping the install's copy of it as it is")
        hold_pages(layout, pages.directory)
    elif pages.directory is None:
        dropped = drop_pages(layout)
        if dropped is not None:
            say(
                f"Removed the install's copy of the pages of {dropped}: every registration of "
                f"{layout.root} that names no pages directory reads the Kinetis repository "
                "from now on"
            )


def write_requirements(layout: InstallLayout) -> None:
    """`requirements.txt`, replaced atomically: the updater reads it without the lock too."""
    try:
        write_atomic(os.fspath(layout.requirements), f"{REQUIREMENT}\n".encode())
    except OSError as error:
        raise InstallerError(
            f"Could not write {layout.requirements} ({error.strerror or error})."
        ) from error
