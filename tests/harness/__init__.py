"""Tests of the test harness itself (`tests/support/`): its origin, processes, HTTP
server and once-per-run builds behave as the tests relying on them assume."""
