"""The search evaluation: a real documentation tree exported at a fixed commit, and judged queries."""
