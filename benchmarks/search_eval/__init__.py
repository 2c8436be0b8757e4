"""The search evaluation: a real documentation tree at a fixed commit, and judged queries."""
