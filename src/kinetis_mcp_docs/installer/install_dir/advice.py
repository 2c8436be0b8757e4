"""What the installer tells a user to run.

No install puts `kinetis-docs` on PATH: `pipx run` and `nox -s setup_from_source` leave no
command behind. The command that looks after an install is that install's own,
`DIR/current/bin/kinetis-docs`, so every command a message names is written that way,
with `KINETIS_MCP_DOCS_DIR=DIR` before it unless DIR is the default: run from the user's
shell, it then acts on the install the message is about. Where nothing is installed yet
there is no such command, and the package is not on PyPI yet: the command named is the
README's, in a clone (`install_here`). An install made from a checkout's wheelhouse is
set up again from that checkout (`in_checkout`), since its own `setup` would ask an index.

The README's command runs pip and nox through the clone's `.venv/bin/python`, never through
the scripts beside it (`.venv/bin/pip`, `.venv/bin/nox`): their first lines name the path
the clone had when `.venv` was made, and fail once it moves, where its interpreter does
not. So the same command works in a fresh clone, again in place, and in a clone that
moved. A checkout that is gone (moved or deleted) cannot be named with `cd`: the message
says to run the command in the clone's new place, or in a fresh clone.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from ..errors import InstallerError
from ..layout import InstallLayout
from ..names import COMMAND_NAME, DIR_ENVIRONMENT_VARIABLE
from .ownership import delete_command, resolve_directory

# What installs from a clone of this project, run in it (the README's first command): nox
# in the clone's own environment, then its session.
CLONE_VENV = "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]'"
SESSION = ".venv/bin/python -m nox -s setup_from_source"
# The file a clone holds that runs the session: a checkout without it is gone.
_NOXFILE = "noxfile.py"


def kinetis_docs(root: Path, *words: str, pages: str | None = None) -> str:
    """`kinetis-docs WORDS` as a user runs it for the install directory `root`.

    The install's own command when it has one, after `KINETIS_MCP_DOCS_DIR` when `root` is
    not the default and `pages`, the setting of the pages a `setup` keeps
    (`KINETIS_MCP_DOCS_PAGES=DIR`, `pages.Pages.setting`), when given. Without one, a setup
    is the README's from a clone (`install_here`, which holds a copy of the clone's docs/),
    anything else plain `kinetis-docs`.
    """
    own = environment_command(root, InstallLayout(root).current, *words, pages=pages)
    if own is not None:
        return own
    if words[:1] == ("setup",):
        # No command of its own to run it with: the README's, in a clone.
        return install_here(root, *words[1:], settings=[] if pages is None else [pages])
    return " ".join([*_settings(root, pages), COMMAND_NAME, *words])


def environment_command(
    root: Path, environment: Path, *words: str, pages: str | None = None
) -> str | None:
    """`kinetis-docs WORDS` run by the environment `environment` of the install in `root`
    (its settings as `kinetis_docs` gives them), or None when it has no command that runs:
    `current`'s, or one `current` no longer names (an uninstall that removed it, and kept
    an environment a byte-compile still writes)."""
    if not _runs(InstallLayout(root), environment):
        return None
    command = environment / "bin" / COMMAND_NAME
    return " ".join([*_settings(root, pages), shlex.quote(os.fspath(command)), *words])


def _settings(root: Path, pages: str | None) -> list[str]:
    """The variables a command for `root` is run with: the directory unless it is the
    default, and the setting of the pages when one is given."""
    settings = [] if _is_default(root) else [_directory_setting(root)]
    return settings if pages is None else [*settings, pages]


def _runs(layout: InstallLayout, environment: Path) -> bool:
    """Whether the environment's `kinetis-docs` can run: a script whose interpreter is gone
    cannot (`exists` follows the link)."""
    command = environment / "bin" / COMMAND_NAME
    return os.access(command, os.X_OK) and os.path.exists(layout.python(environment))  # noqa: PTH110


def checkout_present(checkout: Path) -> bool:
    """Whether the checkout a source install was made from is still where it was: it holds
    the session its command runs."""
    return (checkout / _NOXFILE).is_file()


def in_checkout(
    checkout: Path,
    root: Path,
    *arguments: str,
    pull: bool = False,
    settings: Sequence[str] = (),
) -> str:
    """How to install a source checkout into `root` again, as its README does, quoted for a
    sentence: `cd CHECKOUT && ...` while it is there; once it is gone (moved, deleted), the
    same command to run in the clone's new place. `arguments` follow `--` (`codex`,
    `--live`), `settings` (a pages variable) precede the session, and `pull` first runs
    `git pull`, which is how a source install takes its checkout's changes."""
    command = install_here(root, *arguments, settings=settings)
    if pull:
        command = f"git pull && {command}"
    if checkout_present(checkout):
        return f"`cd {shlex.quote(os.fspath(checkout))} && {command}`"
    return (
        f"`{command}`, run in the clone's new place ({checkout}, where it was installed "
        "from, is gone), or in a fresh clone of kinetis-mcp-docs"
    )


def install_here(root: Path, *arguments: str, settings: Sequence[str] = ()) -> str:
    """How to install into `root` from a clone, run in it, as its README says: no install's
    own command exists yet (or it cannot set up a source install), and the package is not
    on PyPI yet. `settings` (a pages variable) precede the session."""
    directory = [] if _is_default(root) else [_directory_setting(root)]
    session = [*directory, *settings, SESSION, *(["--", *arguments] if arguments else [])]
    return f"{CLONE_VENV} && {' '.join(session)}"


def delete_and_install(root: Path) -> str:
    """How to mend an install whose marker was damaged: setup refuses the directory (it
    cannot tell it from one of the user's), so it is deleted, then installed again from a
    clone, its own command going with it."""
    return (
        f"delete it, `{delete_command(root)}`, and install again from a clone of "
        f"kinetis-mcp-docs, `{install_here(root)}` (Claude Code) or "
        f"`{install_here(root, 'codex')}` (Codex), as its README says"
    )


def setup_with_new_python(checkout: Path | None) -> str:
    """What to do for an install whose interpreter is gone, said before the commands that
    do it (`with_new_python`): setup again from a clone, whose `.venv` goes too."""
    there = checkout is not None and checkout_present(checkout)
    where = f"its checkout, {checkout}" if there else "a clone of kinetis-mcp-docs"
    return (
        f"run setup again with a Python you have now, from {where} (whose .venv is made "
        "again, since it links to the Python that went too)"
    )


def with_new_python(
    root: Path, *arguments: str, checkout: Path | None = None, settings: Sequence[str] = ()
) -> str:
    """Setup again with the Python the user has now, for an install whose interpreter is
    gone: from a clone (`checkout`, for a source install, while it is there), whose `.venv`
    is made again first, since it links to the interpreter that went too."""
    steps = [f"rm -rf .venv && {install_here(root, *arguments, settings=settings)}"]
    if checkout is not None and checkout_present(checkout):
        steps.insert(0, f"cd {shlex.quote(os.fspath(checkout))}")
    return " && ".join(steps)


def _is_default(root: Path) -> bool:
    """Whether `root` is the default install directory; never, when HOME names none that
    setup would take (a relative HOME, or one holding a control character)."""
    try:
        return root == resolve_directory({})
    except InstallerError:
        return False


def _directory_setting(root: Path) -> str:
    return f"{DIR_ENVIRONMENT_VARIABLE}={shlex.quote(os.fspath(root))}"
