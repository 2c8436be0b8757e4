"""The `kinetis-docs` command: thin Click commands over the installer's modules.

This is the one place an `InstallerError` becomes text: one line on stderr and the error's
exit code, never a traceback. An `OSError` that no step translated (a file system that
turned read-only mid-way, say) becomes one line too.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kinetis_mcp_docs.installer.errors import InstallerError


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InstallerError as error:
            click.echo(f"kinetis-docs: {error.message}", err=True)
            ctx.exit(error.exit_code)
        except OSError as error:
            where = f" ({error.filename})" if error.filename else ""
            click.echo(f"kinetis-docs: {error.strerror or error}{where}.", err=True)
            ctx.exit(1)


@click.group(cls=_Group)
@click.version_option(package_name="kinetis-mcp-docs")
def main() -> None:
    """Read the current Kinetis documentation from Claude Code or Codex, over MCP."""


@main.command()
@click.argument("client", required=False, type=click.Choice(["codex"]))
def setup(client: str | None) -> None:
    """Install the server and register it with Claude Code, or with Codex (`setup codex`)."""
    from kinetis_mcp_docs.installer.setup import run_setup  # noqa: PLC0415 - keep start lean

    result = run_setup(client, say=click.echo)
    click.echo(
        f"Registered {result.client.label} server kinetis-docs (kinetis-mcp-docs "
        f"{result.version}, installed in {result.root}); check it with "
        f"`{result.client.check_hint()}` and start a new {result.client.label} session."
    )


@main.command()
@click.option(
    "--docs-dir",
    type=click.Path(exists=True, file_okay=False),
    help="Serve kinetis://docs/<slug> from DIR/<slug>.md instead of the Kinetis repository.",
)
def serve(docs_dir: str | None) -> None:
    """Run the stdio MCP server in this process (no update check)."""
    from kinetis_mcp_docs.server.stdio import main as serve_main  # noqa: PLC0415

    sys.exit(serve_main(["--docs-dir", docs_dir] if docs_dir else []))


@main.command()
def start() -> None:
    """What a client runs: the daily update check under the lock, then the server."""
    from kinetis_mcp_docs.installer.start import main as start_main  # noqa: PLC0415

    sys.exit(start_main())
