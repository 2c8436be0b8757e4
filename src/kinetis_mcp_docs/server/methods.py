"""The stdio server's method table under the name it had in 1.0 (`stdio.methods` now), and
the error table both servers share (`errors.ERRORS`) under its old name: importable here for
the whole 1.x line, since a host may have imported either from here."""

from __future__ import annotations

from .. import PROTOCOL_VERSION
from .errors import ERRORS
from .stdio.methods import method_table

__all__ = ["ERRORS", "PROTOCOL_VERSION", "method_table"]
