"""A registration at another scope than user, as Claude Code reports one.

Seen from the home directory, where every client CLI runs (`base.neutral_directory`), a
local-scope `kinetis-docs` for that directory hides the user-scope one this installer
manages, and a project-scope one (a `.mcp.json` there or above) is reported only when there
is no user-scope one. Such a registration is named, with how to remove it. Codex reports
no scope.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import SERVER_NAME, Client, neutral_directory
from .registration import Registration, scope_name


@dataclass(frozen=True)
class OtherScope:
    """A registration reported at another scope than user: what it is, and how to remove it."""

    what: str
    remove: str


def other_than_user(scope: str | None) -> bool:
    """Whether Claude Code's `scope`, as it says it, is another scope than user; False for
    none (Codex reports none)."""
    return scope_name(scope) not in (None, "user")


def other_scope(client: Client, shown: Registration) -> OtherScope | None:
    """Whether `shown` is at another scope than user, as Claude Code reports it.

    Seen from the home directory (`neutral_directory`), a local-scope `kinetis-docs` for that
    directory hides the user-scope one this installer manages, and a project-scope one (a
    `.mcp.json` there or above) is reported only when there is no user-scope one. None for a
    user-scope registration, and for Codex, which reports no scope.
    """
    if not other_than_user(shown.scope):
        return None
    scope = shown.scope_name
    where = neutral_directory()
    remove = f"`{client.executable} mcp remove {SERVER_NAME} --scope {scope}`"
    if scope == "local":
        return OtherScope(
            what=(
                f"{client.label} reports a local-scope {SERVER_NAME} for {where}, which hides "
                f"the user-scope one there: sessions started in {where} run {shown.describe()}"
            ),
            remove=f"{remove}, run in {where}",
        )
    if scope == "project":
        return OtherScope(
            what=(
                f"{client.label} reports a project-scope {SERVER_NAME}, from a .mcp.json in "
                f"{where} or a directory above it, and no user-scope one"
            ),
            remove=f"{remove}, run in the directory holding that .mcp.json",
        )
    return OtherScope(
        what=f"{client.label} reports {SERVER_NAME} at another scope than user ({shown.scope})",
        remove=f"`{client.check_hint()}`, run in {where}, shows where it comes from",
    )


def hiding_registration(client: Client, shown: Registration | None) -> OtherScope | None:
    """`shown` as `other_scope` words it when it is a local-scope registration for the home
    directory, which hides the user-scope one there; else None."""
    if shown is None or shown.scope_name != "local":
        return None
    return other_scope(client, shown)
