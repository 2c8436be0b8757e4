"""The `kinetis-docs` command: thin Click commands over the installer's modules.

This is the one place an `InstallerError` becomes text: one line on stderr and the error's
exit code, never a traceback. An `OSError` that no step translated (a file system that
turned read-only mid-way, say) becomes one line too.
"""

from __future__ import annotations

import os
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


_HTTP_ONLY = ("host", "port", "private", "workers", "rate_limit", "rate_limit_storage", "quiet")
_HTTP_LISTS = ("trusted_proxy", "allowed_host", "allowed_origin")


@main.command()
@click.option(
    "--docs-dir",
    type=click.Path(exists=True, file_okay=False),
    help=(
        "stdio: serve kinetis://docs/<slug> from DIR/<slug>.md instead of the Kinetis "
        "repository. --http: serve every *.md and *.mdx file under DIR by its path."
    ),
)
@click.option("--http", "http", is_flag=True, help="Serve MCP over HTTP at POST /api/mcp.")
@click.option("--host", default=None, help="--http: address to bind.  [default: 127.0.0.1]")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=None, help="--http: port.  [default: 8000]"
)
@click.option(
    "--private",
    is_flag=True,
    default=None,
    help="--http: keep the route dark (404) until MCP_ENABLED=true and MCP_BEARER_TOKEN are set.",
)
@click.option(
    "--workers", type=click.IntRange(min=1), default=None, help="--http: worker processes."
)
@click.option(
    "--rate-limit",
    type=click.IntRange(min=1),
    default=None,
    help="--http: requests per minute per client.  [default: 60]",
)
@click.option(
    "--rate-limit-storage",
    default=None,
    metavar="URI",
    help="--http: memory:// (per instance) or redis://HOST:PORT shared by every instance.",
)
@click.option(
    "--trusted-proxy",
    multiple=True,
    metavar="ADDR",
    help="--http: address or network whose X-Forwarded-For is believed.  [default: loopback]",
)
@click.option(
    "--allowed-host",
    multiple=True,
    metavar="NAME",
    help="--http: Host name accepted on loopback connections besides the loopback names.",
)
@click.option(
    "--allowed-origin",
    multiple=True,
    metavar="ORIGIN",
    help="--http: Origin accepted on loopback connections besides loopback origins.",
)
@click.option(
    "--no-access-log",
    "quiet",
    is_flag=True,
    default=None,
    help="--http: do not log a line per request.",
)
def serve(docs_dir: str | None, *, http: bool, **options: Any) -> None:
    """Run the MCP server in this process (no update check): stdio, or HTTP with --http.

    Over HTTP the bearer token comes from MCP_BEARER_TOKEN, never from the command line.
    """
    given = [name for name in (*_HTTP_ONLY, *_HTTP_LISTS) if options[name]]
    if not http:
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise click.UsageError(f"{flag} applies to --http only")
        from kinetis_mcp_docs.server.stdio import main as serve_main  # noqa: PLC0415

        sys.exit(serve_main(["--docs-dir", docs_dir] if docs_dir else []))
    try:
        from kinetis_mcp_docs.server.http.serve import serve as serve_http  # noqa: PLC0415
    except ImportError as error:
        click.echo(
            f"kinetis-docs: serve --http needs the http extra ({error.name} is missing): "
            "pip install 'kinetis-mcp-docs[http]'",
            err=True,
        )
        sys.exit(1)
    environ = _http_environ(docs_dir, options)
    host = options["host"] or "127.0.0.1"
    port = 8000 if options["port"] is None else options["port"]
    workers = options["workers"] or 1
    sys.exit(serve_http(host, port, workers, environ, access_log=not options["quiet"]))


def _http_environ(docs_dir: str | None, options: dict[str, Any]) -> dict[str, str]:
    """The route's settings as the environment variables every worker reads."""
    environ: dict[str, str] = {}
    if docs_dir:
        environ["KINETIS_DOCS_PAGES_DIR"] = os.path.abspath(docs_dir)  # noqa: PTH100
    if options["private"]:
        environ["KINETIS_DOCS_PRIVATE"] = "1"
    if options["rate_limit"]:
        environ["KINETIS_DOCS_RATE_LIMIT"] = str(options["rate_limit"])
    if options["rate_limit_storage"]:
        environ["KINETIS_DOCS_RATE_LIMIT_STORAGE"] = options["rate_limit_storage"]
    for option, variable in (
        ("trusted_proxy", "KINETIS_DOCS_TRUSTED_PROXIES"),
        ("allowed_host", "KINETIS_DOCS_ALLOWED_HOSTS"),
        ("allowed_origin", "KINETIS_DOCS_ALLOWED_ORIGINS"),
    ):
        if options[option]:
            environ[variable] = ",".join(options[option])
    return environ


@main.command()
def start() -> None:
    """What a client runs: the daily update check under the lock, then the server."""
    from kinetis_mcp_docs.installer.start import main as start_main  # noqa: PLC0415

    sys.exit(start_main())
