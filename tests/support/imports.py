"""What a Python process imported, read from what `-X importtime` wrote on its stderr."""

from __future__ import annotations

# `-X importtime`, for a child whose command line the test does not write itself.
PROFILE_IMPORTS = {"PYTHONPROFILEIMPORTTIME": "1"}


def imported_modules(stderr: str) -> list[str]:
    """The modules a process started with `-X importtime` (or `PROFILE_IMPORTS` in its
    environment) imported, in order, from what it wrote on stderr."""
    return [
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    ]
