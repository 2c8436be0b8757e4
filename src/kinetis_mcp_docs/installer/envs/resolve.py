"""What a fresh install of the requirement would hold, asked of pip without installing.

One resolution decides an update: pip is asked what a fresh install of the requirement
(`kinetis-mcp-docs>=1.0,<2`, with every dependency at its newest allowed version) would
contain. The update compares that with what `current` holds, and builds from exactly those
pins when they differ.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..errors import InstallerError
from ..layout import REQUIREMENT
from .environment import Environment
from .metadata import DISTRIBUTION, canonical_name
from .pip import PLAIN, PipRun, run_pip


def resolve(
    environment: Environment,
    *,
    deadline: float | None,
    pip_options: list[str],
    pip: PipRun = PLAIN,
) -> dict[str, str]:
    """What a fresh install of the requirement would hold: canonical name -> version.

    Resolved by `environment`'s own pip (so markers are evaluated for the interpreter the
    next environment is built from) with `--dry-run --ignore-installed`, which downloads
    only what it must read and installs nothing. The requirement is the install's
    `requirements.txt`, or the package's own when it has none.
    """
    requirements = environment.layout.requirements
    requirement = ["-r", os.fspath(requirements)] if requirements.is_file() else [REQUIREMENT]
    with tempfile.TemporaryDirectory(prefix="kinetis-update-", dir=pip.scratch) as scratch:
        report = Path(scratch, "report.json")
        run_pip(
            environment.python,
            [
                "install",
                "--dry-run",
                "--ignore-installed",
                "--quiet",
                *pip_options,
                "--report",
                os.fspath(report),
                *requirement,
            ],
            deadline=deadline,
            what=f"check for a newer {DISTRIBUTION}",
            how=pip,
        )
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
            resolved = {
                canonical_name(item["metadata"]["name"]): str(item["metadata"]["version"])
                for item in data["install"]
            }
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InstallerError(
                f"Could not check for a newer {DISTRIBUTION}: pip's report was unreadable "
                f"({error!r})."
            ) from error
    if DISTRIBUTION not in resolved:
        raise InstallerError(f"Could not check for a newer {DISTRIBUTION}: pip did not offer it.")
    return resolved
