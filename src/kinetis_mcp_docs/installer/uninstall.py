"""`kinetis-docs uninstall [codex]`: the client's registration, then the install directory.

In order, each step said on one line:

1. The install directory (`KINETIS_MCP_DOCS_DIR`, or the default) is examined, reading
   only: a path that is neither absent, empty nor ours (the marker) is refused before
   anything is touched, the registration included.
2. The client's `kinetis-docs` registration is removed — when it runs this install
   directory, or one that no longer exists. One that runs another install directory, or a
   command this installer did not write, is left and named.
3. The directory is removed only when no other client is still registered to it (a client
   whose CLI is not on PATH cannot be; see docs/setup.md), under the update lock, and only
   what this installer wrote (`removal.py`).

Nothing to do is no failure: a second run says there is no registration and nothing
installed, and exits 0.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from kinetis_mcp_docs.installer import directory, registration
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.layout import DIR_ENVIRONMENT_VARIABLE, InstallLayout
from kinetis_mcp_docs.installer.lock import update_lock
from kinetis_mcp_docs.installer.registration import SERVER_NAME, Client
from kinetis_mcp_docs.installer.removal import remove_install

_VERB = "remove"


def run_uninstall(
    client_name: str | None,
    *,
    say: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> None:
    """Unregister one client, then remove the install directory if no client uses it.

    Raises `InstallerError` for a directory that is not ours (nothing touched), a client
    CLI missing from PATH, or a CLI that fails.
    """
    environ = dict(os.environ if environ is None else environ)
    client = registration.client_named(client_name)
    root = directory.resolve_directory(environ)
    layout = directory.owned_install(root, _VERB)
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
    for other in registration.CLIENTS:
        if other is not client and _runs(other, root):
            say(
                f"Kept {root}: {other.label} still runs it; `{other.our_command('uninstall')}` "
                "removes that registration, then the directory"
            )
            return
    _remove(layout, say)


def _unregister(client: Client, cli: str, root: Path) -> str:
    """Remove the client's registration if it runs `root`; what was done, as a line.

    A registration running an install directory that no longer exists is removed too:
    no client can start it.
    """
    existing = client.registration(cli)
    if existing is None:
        return f"{client.label} has no {SERVER_NAME} registration"
    other = existing.install_directory
    if existing.runs_from(root):
        client.unregister(cli)
        return f"Removed {client.label}'s {SERVER_NAME} registration"
    if other is not None and not os.path.lexists(other):
        client.unregister(cli)
        return (
            f"Removed {client.label}'s {SERVER_NAME} registration: it ran {other}, which no "
            "longer exists"
        )
    if other is None:
        return (
            f"Left {client.label}'s {SERVER_NAME} registration: it runs "
            f"`{shlex.join(existing.argv)}`, which this installer did not write"
        )
    return (
        f"Left {client.label}'s {SERVER_NAME} registration: it runs the install in {other}; "
        f"`{DIR_ENVIRONMENT_VARIABLE}={shlex.quote(os.fspath(other))} "
        f"{client.our_command('uninstall')}` removes that one"
    )


def _runs(client: Client, root: Path) -> bool:
    """Whether `client` is registered to run the install in `root` (no CLI: it is not)."""
    cli = client.cli_on_path()
    if cli is None:
        return False
    existing = client.registration(cli)
    return existing is not None and existing.runs_from(root)


def _remove(layout: InstallLayout, say: Callable[[str], None]) -> None:
    """Under the lock, and only while the marker still proves it ours: remove the install."""
    root = layout.root
    with update_lock(layout.lock, on_wait=lambda: say(f"Waiting for another update of {root}")):
        if directory.owned_install(root, _VERB) is None:
            say(f"Nothing is installed in {root}")
            return
        left = remove_install(layout)
    if left:
        say(
            f"Kept {root}: it still holds {', '.join(left)}, which this installer did not "
            "write or a byte-compile is still writing; remove those, or run uninstall again "
            "in a moment"
        )
    else:
        say(f"Removed {root}")
