"""The `kinetis-docs` command: thin Click commands over `commands/`, and the two hand-offs.

`serve` runs the server (stdio, or the HTTP route) in this process, and `start` is the
spawn entry (`start.py`); nothing else of the installer imports the server.

This is the one place an `InstallerError` becomes text: one line on stderr and the error's
exit code, never a traceback. An `OSError` that no step translated (a file system that
turned read-only mid-way, say) becomes one line too.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

from ..printable import one_line
from .errors import (
    InstallerError,
    interrupted_exit_code,
    interruption,
)


class _OneLineUsage(click.UsageError):
    """A refused command line, in one line and exit status 2, as the stdio server (`python
    -m kinetis_mcp_docs.server`) gives it: a client or a script reads one line, not
    click's usage block."""

    def show(self, file: Any = None) -> None:
        click.echo(one_line(f"kinetis-docs: {self.format_message()}"), file=file, err=file is None)


# `kinetis-docs` alone still shows the help: it is asked for, not refused.
_HELP_ASKED: tuple[type[click.UsageError], ...] = tuple(
    getattr(click.exceptions, name)
    for name in ("NoArgsIsHelpError",)  # click 8.2 and later
    if hasattr(click.exceptions, name)
)


@contextlib.contextmanager
def _usage_in_one_line(ctx: click.Context) -> Iterator[None]:
    """click's usage errors raised in the block, as one line naming the command's help;
    the help itself, asked for by `kinetis-docs` alone, stays as it is."""
    try:
        yield
    except click.UsageError as error:
        if isinstance(error, (_OneLineUsage, *_HELP_ASKED)):
            raise
        message = error.format_message().rstrip(".")
        if isinstance(error, click.NoSuchOption):
            # Before click 8.4 the name followed a colon; the same words in every release.
            old = f"No such option: {error.option_name}"
            if message.startswith(old):
                message = f"No such option {error.option_name!r}{message[len(old) :]}"
        raise _OneLineUsage(f"{message} (see `{ctx.command_path} --help`)", ctx) from None


class _OneLineCommand(click.Command):
    """Every command: a refused command line is one line (`_OneLineUsage`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        with _usage_in_one_line(ctx):
            return super().parse_args(ctx, args)


class _Group(click.Group):
    command_class = _OneLineCommand

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        with _usage_in_one_line(ctx):
            return super().parse_args(ctx, args)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        with _usage_in_one_line(ctx):
            return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InstallerError as error:
            click.echo(one_line(f"kinetis-docs: {error.message}"), err=True)
            ctx.exit(error.exit_code)
        except OSError as error:
            where = f" ({error.filename})" if error.filename else ""
            click.echo(one_line(f"kinetis-docs: {error.strerror or error}{where}."), err=True)
            ctx.exit(1)
        except KeyboardInterrupt as error:
            # Ctrl-C (or SIGTERM, SIGHUP in a command that writes): the shell's status for
            # it, not click's "Aborted!" and 1. Every child runs in a process group of its
            # own and is stopped with us (`children.py`).
            click.echo(f"kinetis-docs: {interruption(error)}.", err=True)
            ctx.exit(interrupted_exit_code(error))


def _say(line: str) -> None:
    """A command's line of progress, one line whatever the paths in it hold."""
    click.echo(one_line(line))


_CHOICES = "no argument for Claude Code, or `codex` for Codex"


def _client_argument(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """The optional client argument of setup and uninstall: none (Claude Code) or `codex`."""
    if value is None or value == "codex":
        return value
    default = (
        f" Claude Code is the default: `{ctx.command_path}`."
        if value.lower().startswith("claude")
        else ""
    )
    raise click.UsageError(
        f"`{ctx.command_path} {value}`: {ctx.info_name} takes {_CHOICES}, and nothing else."
        f"{default}",
        ctx,
    )


_CLIENT = click.argument("client", required=False, callback=_client_argument, metavar="[codex]")


@click.group(cls=_Group)
@click.version_option(package_name="kinetis-mcp-docs")
def main() -> None:
    """Serve documentation pages to Claude Code or Codex, over MCP.

    \b
      kinetis-docs setup          install, and register with Claude Code
      kinetis-docs setup codex    install, and register with Codex
      kinetis-docs status         what is installed and registered; read a page
      kinetis-docs update         update now rather than at the daily check
      kinetis-docs uninstall      remove the registration, then the install

    The install is a virtual environment of its own, which a client's start updates at
    most once a day within kinetis-mcp-docs>=1.0,<2. It serves the Kinetis
    repository's pages, read live, or a directory of pages named at setup; an install
    from a clone (`nox -s setup_from_source`) holds a copy of the clone's docs/.

    \b
    Install directory: KINETIS_MCP_DOCS_DIR, or ~/.kinetis-mcp-docs when unset.
    Network: installing and updating need the package index pip is pointed
      at: PyPI once the package is published; from a clone, the clone's own
      wheelhouse, which `nox -s setup_from_source` builds (no network once
      built; the install keeps a copy). Reading a page needs
      raw.githubusercontent.com (HTTPS_PROXY and SSL_CERT_FILE are honoured),
      unless KINETIS_MCP_DOCS_PAGES or KINETIS_MCP_DOCS_PAGES_COPY named a
      directory of pages at setup.
    """


@main.command(short_help="Install, verify, and register with Claude Code or Codex.")
@_CLIENT
def setup(client: str | None) -> None:
    """Install the server and register it with Claude Code, or with Codex (`setup codex`).

    Installs kinetis-mcp-docs>=1.0,<2 into a virtual environment of its own in the install
    directory, which must be absent, empty or an earlier install (carrying its
    .kinetis-mcp-docs marker); anything else is refused with nothing written. Then reads a
    page through the exact command it registers, and registers that command as
    kinetis-docs at user scope. Running it again reinstalls and replaces the registration.
    For Codex, this shell's proxy, certificate and pip variables are recorded with the
    registration, since Codex does not pass them on to the server.

    \b
    Install directory: KINETIS_MCP_DOCS_DIR, or ~/.kinetis-mcp-docs when unset.
    Pages: from raw.githubusercontent.com; with KINETIS_MCP_DOCS_PAGES=DIR
      from DIR/<page>.md (a checkout's docs/, say), read on every call; with
      KINETIS_MCP_DOCS_PAGES_COPY=DIR from a copy of them the install holds,
      made again at every update while DIR is there.
    Network: the package index pip is pointed at (PyPI, or pip's own
      PIP_INDEX_URL, PIP_FIND_LINKS, ...: from a clone, its own wheelhouse),
      and raw.githubusercontent.com for the page it reads, unless a pages
      variable is set. An install from a clone is set up again from the clone
      (`nox -s setup_from_source`), which this setup names when asked to.
    """
    from .children import terminations_raised  # noqa: PLC0415
    from .commands.setup import run_setup  # noqa: PLC0415
    from .install_dir.advice import kinetis_docs  # noqa: PLC0415 - keep start lean

    with terminations_raised():
        result = run_setup(client, say=_say)
    pages = f", pages from {result.pages_shown}" if result.pages_shown else ""
    click.echo(
        f"Registered {result.client.label} server kinetis-docs (kinetis-mcp-docs "
        f"{result.version}, installed in {result.root}{pages}); check it with "
        f"`{result.client.check_hint()}` and start a new {result.client.label} session."
    )
    # Nothing puts `kinetis-docs` on PATH: name the install's own.
    uninstall = " ".join(["uninstall", *result.client.arguments])
    click.echo(
        f"Look after it with `{kinetis_docs(result.root, 'status')}` (or `update`, "
        f"`{uninstall}` in place of `status`)."
    )


@main.command(short_help="Show the install and its registrations; read a page.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON document.")
def status(*, as_json: bool) -> None:
    """Show the install, its versions and update times, each client's registration, and
    read one page through each registered command.

    A page is read through the command each client runs, in the environment that client
    gives it; like any client start, that start runs the daily update when it is due.
    Exits 1 when something keeps a client from reading pages, naming the command that
    fixes it; 0 otherwise.

    \b
    Install directory: KINETIS_MCP_DOCS_DIR, or ~/.kinetis-mcp-docs when unset.
    Network: what the server needs, raw.githubusercontent.com (or nothing,
      with a registered pages directory); the package index if an update is due.
    """
    from .commands.status import gather_status  # noqa: PLC0415
    from .commands.status_report import render  # noqa: PLC0415

    report = gather_status(os.environ)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        for line in render(report):
            _say(line)
    sys.exit(0 if report.ok else 1)


@main.command(short_help="Update the install now, whatever the daily timestamp.")
def update() -> None:
    """Update the install now to the newest kinetis-mcp-docs>=1.0,<2.

    The update a client's start makes at most once a day, now, whatever the timestamp:
    under the same lock, one line per step, without the start-up deadline. New client
    sessions start the new version.

    \b
    Install directory: KINETIS_MCP_DOCS_DIR, or ~/.kinetis-mcp-docs when unset.
    Network: the package index setup recorded (PyPI, or pip's own
      PIP_INDEX_URL, PIP_FIND_LINKS, ...); none for an install from a clone,
      which reads its own copy of the clone's wheelhouse.
    """
    from .children import terminations_raised  # noqa: PLC0415
    from .commands.update import run_update  # noqa: PLC0415

    with terminations_raised():
        updated = run_update(os.environ, say=_say)
    if updated is not None:
        click.echo("New client sessions start the new version.")


@main.command(short_help="Remove a client's registration, then the install.")
@_CLIENT
def uninstall(client: str | None) -> None:
    """Remove the registration from Claude Code, or from Codex (`uninstall codex`), then
    the install directory.

    The install directory is removed only when its .kinetis-mcp-docs marker proves it an
    install of this tool and no other client is still registered to it, and then only what
    setup wrote there. A directory that is not an install of this tool is refused with
    nothing touched. Running it again is safe.

    \b
    Install directory: KINETIS_MCP_DOCS_DIR, or ~/.kinetis-mcp-docs when unset.
    Network: none.
    """
    from .children import terminations_raised  # noqa: PLC0415
    from .commands.uninstall import run_uninstall  # noqa: PLC0415

    with terminations_raised():
        run_uninstall(client, say=_say)


# What puts the http extra in a virtual environment of its own, run in a clone (PEP 668:
# a distribution's Python refuses `pip install` outside one). Through the environment's
# interpreter, not its `pip` script: after the clone moves, that script's first line names
# the old path, where the interpreter still runs, and the install writes `kinetis-docs` anew.
HTTP_EXTRA_FROM_CLONE = "python3 -m venv .venv && .venv/bin/python -m pip install '.[http]'"


class _Seconds(click.FloatRange):
    """A number of seconds in a range, and finite: click's range lets `nan` through, which
    the route would refuse later, naming its environment variable instead of the option."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds.", param, ctx)
        return seconds


_SECONDS = _Seconds(min=0, min_open=True)


class _Whole(click.IntRange):
    """A whole number in a range, refused as `what` it must be: click's own words for
    `--port abc` are `'abc' is not a valid integer range`."""

    def __init__(self, what: str, minimum: int, maximum: int | None = None) -> None:
        super().__init__(min=minimum, max=maximum)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            number = int(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError):
            number = None
        if number is None or number < (self.min or 0) or (self.max and number > self.max):
            self.fail(f"{value!r} is not {self.what}", param, ctx)
        return number


_PORT = _Whole("a port number, from 0 to 65535 (0 picks a free port)", 0, 65535)
_ONE_OR_MORE = _Whole("a whole number from 1 up", 1)

_HTTP_ONLY = (
    "host",
    "port",
    "private",
    "workers",
    "rate_limit",
    "rate_limit_storage",
    "quiet",
    "ranking",
    "header_timeout",
    "body_timeout",
    "idle_timeout",
    "max_connections",
    "body_memory",
    "drain_seconds",
    "metrics",
    "access_log",
)
_HTTP_LISTS = ("trusted_proxy", "allowed_host", "allowed_origin")


@main.command(short_help="Run the MCP server here: stdio, or HTTP with --http.")
@click.option(
    "--docs-dir",
    metavar="DIR",
    help=(
        "stdio: serve kinetis://docs/<slug> from DIR/<slug>.md instead of the Kinetis "
        "repository. --http: serve every *.md and *.mdx file under DIR by its path."
    ),
)
@click.option("--http", "http", is_flag=True, help="Serve MCP over HTTP at POST /api/mcp.")
@click.option("--host", default=None, help="--http: address to bind.  [default: 127.0.0.1]")
@click.option(
    "--port", type=_PORT, default=None, help="--http: port; 0 picks a free one.  [default: 8000]"
)
@click.option(
    "--private",
    is_flag=True,
    default=None,
    help="--http: keep the route dark (404) until MCP_ENABLED=true and MCP_BEARER_TOKEN are set.",
)
@click.option("--workers", type=_ONE_OR_MORE, default=None, help="--http: worker processes.")
@click.option(
    "--rate-limit",
    type=_ONE_OR_MORE,
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
    "--header-timeout",
    type=_SECONDS,
    default=None,
    metavar="SECONDS",
    help="--http: time from a request's first byte to the end of its headers.  [default: 20]",
)
@click.option(
    "--body-timeout",
    type=_SECONDS,
    default=None,
    metavar="SECONDS",
    help="--http: time from the end of a request's headers to the end of its body.  [default: 30]",
)
@click.option(
    "--idle-timeout",
    type=_SECONDS,
    default=None,
    metavar="SECONDS",
    help="--http: time a connection may wait for a request's first byte.  [default: 5]",
)
@click.option(
    "--max-connections",
    type=_ONE_OR_MORE,
    default=None,
    metavar="N",
    help="--http: connections per worker; the oldest idle one makes room.  [default: 1000]",
)
@click.option(
    "--body-memory",
    type=click.IntRange(min=4),
    default=None,
    metavar="MIB",
    help=(
        "--http: MiB of request bodies a worker holds at once; a body past it is 503 "
        "before it is read.  [default: 64]"
    ),
)
@click.option(
    "--ranking",
    type=click.Choice(["owndocs", "relevance"]),
    default=None,
    help=(
        "--http: how search_docs ranks: owndocs (the OwnDocs contract's scoring) or "
        "relevance (BM25, with the line each snippet starts on).  [default: owndocs]"
    ),
)
@click.option(
    "--drain-seconds",
    type=_Seconds(min=0, max=3600),
    default=None,
    metavar="SECONDS",
    help=(
        "--http: after SIGTERM, keep answering this long while /readyz says 503, then "
        "stop.  [default: 5]"
    ),
)
@click.option(
    "--metrics",
    is_flag=True,
    default=None,
    help="--http: serve Prometheus metrics at GET /metrics.",
)
@click.option(
    "--access-log",
    type=click.Choice(["text", "json"]),
    default=None,
    help="--http: a line per request (uvicorn's), or one JSON object each.  [default: text]",
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

    \b
    Network: raw.githubusercontent.com for every page read (HTTPS_PROXY and
      SSL_CERT_FILE are honoured), unless --docs-dir serves the pages from a
      directory; with --http, also the address it listens on, and the Redis
      server of a redis:// --rate-limit-storage.
    """
    if docs_dir is not None and not os.path.isdir(docs_dir):  # noqa: PTH112
        # The stdio server's own words for it, whichever way it is reached.
        raise _OneLineUsage(f"--docs-dir {docs_dir}: not a directory")
    given = [name for name in (*_HTTP_ONLY, *_HTTP_LISTS) if options[name] not in (None, ())]
    if not http:
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise _OneLineUsage(f"{flag} applies to --http only")
        from ..server.stdio.serve import main as serve_main  # noqa: PLC0415

        sys.exit(serve_main(["--docs-dir", docs_dir] if docs_dir else []))
    missing: str | None
    try:
        from ..server.http.uvicorn.serve import missing_extra  # noqa: PLC0415
        from ..server.http.uvicorn.serve import serve as serve_http  # noqa: PLC0415
    except ImportError as error:
        missing = error.name or "a module of it"
    else:
        missing = missing_extra()
    if missing is not None:
        # The package is not on PyPI yet, and an install's own environment is rebuilt by
        # every update: name what works, an environment of its own made from a clone.
        click.echo(
            f"kinetis-docs: serve --http needs the http extra, which this environment lacks "
            f"({missing} is missing). From a clone of kinetis-mcp-docs, install it into an "
            f"environment of its own with `{HTTP_EXTRA_FROM_CLONE}`, run in the clone, then "
            "run `.venv/bin/kinetis-docs serve --http` there.",
            err=True,
        )
        sys.exit(1)
    if options["quiet"] and options["access_log"]:
        raise _OneLineUsage("--access-log and --no-access-log cannot be given together")
    environ = _http_environ(docs_dir, options)
    host = options["host"] or "127.0.0.1"
    port = 8000 if options["port"] is None else options["port"]
    workers = options["workers"] or 1
    typed = {
        variable: option for variable, option in _HTTP_VARIABLES.values() if variable in environ
    }
    sys.exit(
        serve_http(host, port, workers, environ, access_log=not options["quiet"], options=typed)
    )


# Each option of `serve --http` that becomes a variable of the route's settings, by name:
# (the variable, the option as typed).
_HTTP_VARIABLES = {
    "docs_dir": ("KINETIS_DOCS_PAGES_DIR", "--docs-dir"),
    "private": ("KINETIS_DOCS_PRIVATE", "--private"),
    "rate_limit": ("KINETIS_DOCS_RATE_LIMIT", "--rate-limit"),
    "rate_limit_storage": ("KINETIS_DOCS_RATE_LIMIT_STORAGE", "--rate-limit-storage"),
    "trusted_proxy": ("KINETIS_DOCS_TRUSTED_PROXIES", "--trusted-proxy"),
    "allowed_host": ("KINETIS_DOCS_ALLOWED_HOSTS", "--allowed-host"),
    "allowed_origin": ("KINETIS_DOCS_ALLOWED_ORIGINS", "--allowed-origin"),
    "ranking": ("KINETIS_DOCS_RANKING", "--ranking"),
    "header_timeout": ("KINETIS_DOCS_HEADER_TIMEOUT", "--header-timeout"),
    "body_timeout": ("KINETIS_DOCS_BODY_TIMEOUT", "--body-timeout"),
    "idle_timeout": ("KINETIS_DOCS_IDLE_TIMEOUT", "--idle-timeout"),
    "max_connections": ("KINETIS_DOCS_MAX_CONNECTIONS", "--max-connections"),
    "body_memory": ("KINETIS_DOCS_BODY_MEMORY", "--body-memory"),
    "drain_seconds": ("KINETIS_DOCS_DRAIN_SECONDS", "--drain-seconds"),
    "metrics": ("KINETIS_DOCS_METRICS", "--metrics"),
    "access_log": ("KINETIS_DOCS_ACCESS_LOG", "--access-log"),
}


def _http_environ(docs_dir: str | None, options: dict[str, Any]) -> dict[str, str]:
    """The route's settings as the environment variables every worker reads."""
    given = {**options, "docs_dir": docs_dir}
    environ: dict[str, str] = {}
    for name, (variable, _option) in _HTTP_VARIABLES.items():
        value = given[name]
        if value is None or value == ():  # not given (`--drain-seconds 0` is given)
            continue
        if name == "docs_dir":
            environ[variable] = os.path.abspath(value)  # noqa: PTH100
        elif value is True:  # a flag
            environ[variable] = "1"
        elif isinstance(value, tuple):
            environ[variable] = ",".join(value)
        else:
            environ[variable] = str(value)
    return environ


@main.command(short_help="What a registered client runs: the daily update, then serve.")
def start() -> None:
    """What a client runs: the daily update check under the lock, then the server.

    Clients run it as DIR/current/bin/python -I -m kinetis_mcp_docs.installer.start, which
    is the same; it serves stdio in the install directory DIR it runs from.

    \b
    Network: the package index once a day, for the update (a failed one serves
      the installed version); raw.githubusercontent.com for every page read
      (HTTPS_PROXY and SSL_CERT_FILE are honoured), unless the registered
      --docs-dir serves the pages from a directory.
    """
    from .start import main as start_main  # noqa: PLC0415

    sys.exit(start_main())
