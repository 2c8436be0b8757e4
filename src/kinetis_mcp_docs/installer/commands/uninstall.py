"""`kinetis-docs uninstall [codex]`: the client's registration, then the install directory.

In order, each step said on one line:

1. The install directory (`KINETIS_MCP_DOCS_DIR`, or the default) is examined, reading
   only: a path that is neither absent, empty nor ours (the marker), or an install this
   user cannot write (so cannot remove), is refused before anything is touched, the
   registration included.
2. The client's `kinetis-docs` registration is removed — when it runs this install
   directory, or one that no longer exists — and read back: a client still reporting it
   (Claude Code exits 0 without writing a read-only `~/.claude.json`) stops uninstall
   with exit status 1 and the directory kept, so no registration runs a removed install.
   One that runs another install directory, or a command this installer did not write, is
   left and named.
3. The directory is removed only when no client is still registered to it, asked under the
   update lock (which setup holds until it has registered), and only what this installer
   wrote (`removal.py`). A client whose CLI
   is not on PATH cannot start the server, so it does not keep the directory, but the line
   says it could not be checked and how to remove its entry; a CLI that fails keeps the
   directory, with exit status 1. An environment a byte-compile still writes keeps it too,
   and `current` is gone by then: the line names that environment's own `kinetis-docs`,
   which finishes the job once the compile has.

Claude Code is asked from the home directory, where a local-scope `kinetis-docs` would hide
the user-scope one: one there stops uninstall before anything is changed. Sessions started
before the removal keep running the removed install until restarted, and the last line says
so. Nothing to do is no failure: a second run says there is no registration and nothing
installed, and exits 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ..clients.base import SERVER_NAME, Client, could_not_write
from ..clients.known import CLIENTS, client_named
from ..clients.scope import hiding_registration, other_scope
from ..errors import InstallerError
from ..install_dir.advice import environment_command, kinetis_docs
from ..install_dir.lock import update_lock
from ..install_dir.ownership import (
    delete_command,
    owned_install,
    resolve_directory,
)
from ..install_dir.removal import leftovers, remove_install
from ..install_dir.safety import cannot_write
from ..layout import InstallLayout

_VERB = "remove"


def run_uninstall(
    client_name: str | None,
    *,
    say: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> None:
    """Unregister one client, then remove the install directory if no client uses it.

    Raises `InstallerError` for a directory that is not ours (nothing touched), a client
    CLI missing from PATH or failing, and a directory kept because the other client could
    not be checked.
    """
    environ = dict(os.environ if environ is None else environ)
    client = client_named(client_name)
    root = resolve_directory(environ)
    layout = owned_install(root, _VERB)
    unwritable = None if layout is None else cannot_write(layout)
    if unwritable is not None:
        # Checked before the registration goes: never an install left unregistered.
        raise InstallerError(
            f"Cannot remove {root}: {unwritable}. Nothing was changed, {client.label}'s "
            f"{SERVER_NAME} registration included; make it writable (fix the permissions, "
            "or remount it read-write), then run uninstall again."
        )
    cli = client.cli_on_path()
    if cli is None:
        raise InstallerError(
            f"The {client.label} CLI `{client.executable}` is not on PATH, so its "
            f"{SERVER_NAME} registration cannot be removed; run uninstall from a shell where "
            f"`{client.executable}` runs. Nothing was changed."
        )
    say(_unregister(client, cli, root))
    if layout is None:
        say(f"Nothing is installed in {root}")
        return
    _remove(layout, say, client.arguments)


def _unregister(client: Client, cli: str, root: Path) -> str:
    """Remove the client's registration if it runs `root`; what was done, as a line.

    A registration running an install directory that no longer exists is removed too:
    no client can start it. Raises `InstallerError`, with nothing changed, when the CLI
    fails or a local-scope registration hides the user-scope one.
    """
    unchanged = (
        f"Nothing was changed; once `{client.check_hint()}` works in this shell, run "
        "uninstall again."
    )
    try:
        existing = client.registration(cli)
    except InstallerError as error:
        raise InstallerError(f"{error.message} {unchanged}") from error
    if existing is None:
        return f"{client.label} has no {SERVER_NAME} registration"
    hiding = hiding_registration(client, existing)
    if hiding is not None:
        raise InstallerError(
            f"{hiding.what}. Remove it with {hiding.remove}, then run uninstall again: it "
            "hides the user-scope registration uninstall removes. Nothing was changed."
        )
    scoped = other_scope(client, existing)
    if scoped is not None:
        return f"{scoped.what}; uninstall leaves it (remove it with {scoped.remove})"
    other = existing.install_directory
    if existing.runs_from(root) or (other is not None and not os.path.lexists(other)):
        try:
            client.unregister(cli)
        except InstallerError as error:
            raise InstallerError(
                f"{error.message} {_remove_failed(client, error.message)}"
            ) from error
        _confirm_removed(client, cli)
        gone = "" if existing.runs_from(root) else f": it ran {other}, which no longer exists"
        return f"Removed {client.label}'s {SERVER_NAME} registration{gone}"
    if other is None:
        return (
            f"Left {client.label}'s {SERVER_NAME} registration: it runs "
            f"{existing.describe()}, which this installer did not write"
        )
    return (
        f"Left {client.label}'s {SERVER_NAME} registration: it runs the install in {other}; "
        f"`{kinetis_docs(other, 'uninstall', *client.arguments)}` removes that one"
    )


def _remove_failed(client: Client, said: str) -> str:
    """What to do when the client's CLI read the registration but could not remove it
    (`said`, its failure as `cli_failed` words it): a configuration it cannot write is named
    as such; `get` works, so that is not the advice."""
    if could_not_write(said):
        return (
            f"{client.label} cannot write {client.config_file}, where it keeps its "
            f"{SERVER_NAME} registration. Nothing was changed; make that file and its "
            "directory writable (fix their permissions, or remount them read-write), then "
            "run uninstall again."
        )
    return (
        f"Nothing was changed; once `{client.remove_hint}` works in this shell, run "
        "uninstall again."
    )


def _confirm_removed(client: Client, cli: str) -> None:
    """Raise `InstallerError` unless the client no longer reports the user-wide registration.

    Its CLI's exit status is not proof: Claude Code whose `~/.claude.json` cannot be written
    says it removed the entry and exits 0, having written nothing. Removing the directory
    then would leave a registration that runs an install which is gone, so the read-back
    decides, as it does after setup's `mcp add`. Another scope's registration showing once
    the user-wide one went (a project's `.mcp.json`) is not the one removed.
    """
    try:
        shown = client.registration(cli)
    except InstallerError as error:
        raise InstallerError(
            f"{error.message.rstrip('.')}, after removing it, so uninstall cannot tell whether "
            f"it is gone and removed nothing else; once `{client.check_hint()}` works in this "
            "shell, run uninstall again."
        ) from error
    if shown is None or other_scope(client, shown) is not None:
        return
    raise InstallerError(
        f"{client.label} still reports its {SERVER_NAME} registration after "
        f"`{client.remove_hint}` succeeded: it did not write {client.config_file}, where it "
        "keeps it. Nothing was changed; make that file and its directory writable (fix their "
        "permissions, or remount them read-write), then run uninstall again."
    )


def _still_runs(client: Client, root: Path, again: str, say: Callable[[str], None]) -> bool:
    """Whether `client` is still registered to run the install in `root`, said as a line.

    A client whose CLI is not on PATH cannot start the server, so it does not keep the
    directory; the line names the command that removes its entry wherever it is installed.
    Raises `InstallerError` (the directory kept) when the client cannot be checked.
    """
    cli = client.cli_on_path()
    if cli is None:
        say(
            f"Could not check {client.label}: its CLI `{client.executable}` is not on PATH, so "
            f"it cannot start this install either. If {client.label} is installed where this "
            f"shell does not find it, `{client.remove_hint}` run there removes its entry"
        )
        return False
    kept = f"Kept {root}: could not tell whether {client.label} still runs it"
    try:
        existing = client.registration(cli)
    except InstallerError as error:
        raise InstallerError(
            f"{kept}: {error.message.rstrip('.')}. Once `{client.check_hint()}` works in this "
            f"shell, run `{again}` again."
        ) from error
    hiding = hiding_registration(client, existing)
    if hiding is not None:
        raise InstallerError(
            f"{kept}: {hiding.what}, which hides the user-scope one. Remove it with "
            f"{hiding.remove}, then run `{again}` again."
        )
    if existing is None or not existing.runs_from(root):
        return False
    say(
        f"Kept {root}: {client.label} still runs it; "
        f"`{kinetis_docs(root, 'uninstall', *client.arguments)}` removes that registration, "
        "then the directory"
    )
    return True


def _remove(layout: InstallLayout, say: Callable[[str], None], arguments: list[str]) -> None:
    """Under the lock, and only while the marker still proves it ours: remove the install.

    `arguments` follow `uninstall` in a command the last line names (`codex`, or none).
    """
    root = layout.root
    again = kinetis_docs(root, "uninstall", *arguments)
    with update_lock(layout.lock, on_wait=lambda: say(f"Waiting for another update of {root}")):
        if owned_install(root, _VERB) is None:
            say(f"Nothing is installed in {root}")
            return
        # Every client is asked under the lock, the one just unregistered too: a setup
        # holds the lock until it has registered, so one that registered while this
        # uninstall unregistered is seen here, and one that has not yet never will.
        for client in CLIENTS:
            if _still_runs(client, root, again, say):
                return
        left = remove_install(layout)
    if left:
        foreign, compiling = leftovers(layout, left)
        said = []
        if foreign:
            # What is not ours is named, never given as something to remove: it is the
            # user's (or another program's), whatever it is.
            said.append(
                f"it also holds {', '.join(foreign)}, which this installer did not write, so "
                "it left those and the directory as they are"
            )
        if compiling:
            said.append(_compiling(layout, compiling, arguments, foreign=bool(foreign)))
        say(f"Kept {root}: {'; '.join(said)}")
        return
    say(f"Removed {root}")
    say(
        "Client sessions started before now keep running the removed install until they are "
        "restarted, and may fail to read pages meanwhile: restart them"
    )


def _compiling(
    layout: InstallLayout, compiling: list[str], arguments: list[str], *, foreign: bool
) -> str:
    """What to do about the environments a byte-compile still writes (`compiling`, as
    `leftovers` names them), said once `current` went, and with it the command that
    uninstall names everywhere else.

    The held environment is whole (a compile starts once pip has installed it), so its own
    `kinetis-docs` runs: run later, that uninstall removes the rest only once the compile
    lets go, which `rm -rf` run too early would not wait for. Only without such a command is
    the removal by hand named: the directory, or with what is not ours kept, the
    environments alone.
    """
    held = ", ".join(compiling)
    for entry in compiling:
        command = environment_command(layout.root, layout.root / entry, "uninstall", *arguments)
        if command is not None:
            return (
                f"a byte-compile is still writing into {held}, and {layout.current.name} went "
                f"with the kinetis-docs in it: once the compile has finished (seconds), "
                f"`{command}` removes the rest"
            )
    targets = [layout.root / entry for entry in compiling] if foreign else [layout.root]
    removal = " && ".join(delete_command(target) for target in targets)
    return (
        f"a byte-compile is still writing into {held}: once it has finished (seconds), "
        f"`{removal}` removes {'them' if foreign else 'the rest'}"
    )
