"""What the route tells its operator: the Prometheus metrics and the JSON access log, each
fed a request's row on the event loop and writing them together (`batch`)."""
