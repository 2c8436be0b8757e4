"""What the installer tells a user to run.

No install puts `kinetis-docs` on PATH: `pipx run` and `nox -s setup_from_source` leave no
command behind. The command that looks after an install is that install's own,
`DIR/current/bin/kinetis-docs`, so every command a message names is written that way,
with `KINETIS_MCP_DOCS_DIR=DIR` before it unless DIR is the default: run from the user's
shell, it then acts on the install the message is about. Where nothing is installed yet
there is no such command, and the package is not on PyPI yet: the command named is the
README's, in a clone (`install_here`). An install made from a checkout's wheelhouse is
set up again from that checkout (`from_checkout`), since its own `setup` would ask an index.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.install_dir.ownership import delete_command, resolve_directory
from kinetis_mcp_docs.installer.layout import InstallLayout
from kinetis_mcp_docs.installer.names import (
    COMMAND_NAME,
    DIR_ENVIRONMENT_VARIABLE,
    PAGES_ENVIRONMENT_VARIABLE,
)

# What installs from a clone of this project, run in it (the README's first command).
SESSION = ".venv/bin/nox -s setup_from_source"
# What makes a clone's own environment again with the Python on PATH: after a Python
# upgrade its `.venv` links to the interpreter that went too (troubleshooting.md).
NEW_VENV = "rm -rf .venv && python3 -m venv .venv && .venv/bin/pip install 'nox[uv]'"


def kinetis_docs(root: Path, *words: str, pages: str | None = None) -> str:
    """`kinetis-docs WORDS` as a user runs it for the install directory `root`.

    The install's own command when it has one, after `KINETIS_MCP_DOCS_DIR` when `root` is
    not the default and `KINETIS_MCP_DOCS_PAGES` when `pages` is given (a `setup` keeping
    its pages directory). Without one, a setup is the README's from a clone
    (`install_here`, which serves the clone's docs/), anything else plain `kinetis-docs`.
    """
    own = environment_command(root, InstallLayout(root).current, *words, pages=pages)
    if own is not None:
        return own
    if words[:1] == ("setup",):
        # No command of its own to run it with: the README's, in a clone.
        return install_here(root, *words[1:])
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
    default, and the pages directory when one is given."""
    settings = [] if _is_default(root) else [_directory_setting(root)]
    if pages is not None:
        settings.append(f"{PAGES_ENVIRONMENT_VARIABLE}={shlex.quote(pages)}")
    return settings


def _runs(layout: InstallLayout, environment: Path) -> bool:
    """Whether the environment's `kinetis-docs` can run: a script whose interpreter is gone
    cannot (`exists` follows the link)."""
    command = environment / "bin" / COMMAND_NAME
    return os.access(command, os.X_OK) and os.path.exists(layout.python(environment))  # noqa: PTH110


def from_checkout(checkout: Path, *arguments: str, pull: bool = False) -> str:
    """The command that installs a source checkout again, as its README does: its nox
    session (`arguments` after `--`: `codex`, `--live`), after `git pull` with `pull`, which
    is how a source install takes the checkout's changes."""
    steps = [f"cd {shlex.quote(os.fspath(checkout))}"]
    if pull:
        steps.append("git pull")
    steps.append(" ".join([SESSION, *(["--", *arguments] if arguments else [])]))
    return " && ".join(steps)


def install_here(root: Path, *arguments: str) -> str:
    """How to install into `root` with nothing installed there yet: no install's own command
    exists, and the package is not on PyPI yet, so from a clone, as its README says."""
    setting = [] if _is_default(root) else [_directory_setting(root)]
    return " ".join([*setting, SESSION, *(["--", *arguments] if arguments else [])])


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
    where = "a clone of kinetis-mcp-docs" if checkout is None else f"its checkout, {checkout}"
    return (
        f"run setup again with a Python you have now, from {where} (whose .venv is made "
        "again, since it links to the Python that went too)"
    )


def with_new_python(root: Path, *arguments: str, checkout: Path | None = None) -> str:
    """Setup again with the Python the user has now, for an install whose interpreter is
    gone: from a clone (`checkout`, for a source install), whose `.venv` is made again
    first, since it links to the interpreter that went too."""
    setting = [] if _is_default(root) else [_directory_setting(root)]
    steps = [] if checkout is None else [f"cd {shlex.quote(os.fspath(checkout))}"]
    steps.append(NEW_VENV)
    steps.append(" ".join([*setting, SESSION, *(["--", *arguments] if arguments else [])]))
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
