"""The probes a load balancer or an orchestrator asks: `/healthz` and `/readyz`.

- `GET /healthz`: 200 `{"status":"ok"}` whenever the process serves. No token, no rate
  limit, no rebinding guard, in every mode (a dark `--private` route too): it carries no
  documentation, and a liveness check must not fail for want of a credential or a budget.
- `GET /readyz`: 200 with `"status":"ready"` when this worker can serve: its pages can be
  read and its search index is built; 503 with the status (`starting`, `unready`,
  `draining`) and the `reason` otherwise. Both carry the details of `lifecycle`'s
  readiness: the pages indexed, the index's age, and the rate limit's storage (an
  unreachable Redis is reported and leaves the worker ready: the limit fails open).

`HEAD` is answered as `GET` is; any other method is 405.
"""

from __future__ import annotations

from ..codec import dumps
from .answers import Answer, json_answer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .lifecycle import Readiness

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
PROBE_PATHS = (HEALTH_PATH, READY_PATH)

HEALTHY = json_answer(200, b'{"status":"ok"}')


def probe_answer(readiness: Readiness) -> Answer:
    """`/readyz`'s answer: 200 when ready, else 503, the details in the body."""
    body = dumps({"status": readiness.status, **readiness.details}).encode("utf-8")
    return json_answer(200 if readiness.ready else 503, body)
