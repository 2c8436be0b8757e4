"""The fixed names of an install directory, as plain strings.

Kept apart from `layout` because the spawn entry reads them on every client start and
must import nothing more than it needs (see `start`).
"""

MARKER_NAME = ".kinetis-mcp-docs"
MARKER_CONTENT = "kinetis-mcp-docs install directory\n"
LOCK_NAME = ".update.lock"
LAST_CHECK_NAME = ".last-update-check"
LAST_FAILURE_NAME = ".last-update-failure"
SOURCE_NAME = "package-source.json"
REQUIREMENTS_NAME = "requirements.txt"
ENVS_NAME = "envs"
CURRENT_NAME = "current"
PREVIOUS_NAME = "previous"
SCRATCH_NAME = ".scratch"
# What an install holds of the directories it was set up from, so that it keeps serving and
# updating when they move or go: a copy of its pages, and of a source install's wheelhouse.
PAGES_NAME = "pages"
PAGES_SOURCE_NAME = "pages-source.json"
WHEELHOUSE_NAME = "wheelhouse"

REQUIREMENT = "kinetis-mcp-docs>=1.0,<2"
DIR_ENVIRONMENT_VARIABLE = "KINETIS_MCP_DOCS_DIR"
PAGES_ENVIRONMENT_VARIABLE = "KINETIS_MCP_DOCS_PAGES"
PAGES_COPY_ENVIRONMENT_VARIABLE = "KINETIS_MCP_DOCS_PAGES_COPY"
DOCS_DIR_OPTION = "--docs-dir"
START_MODULE = "kinetis_mcp_docs.installer.start"
# What the registered interpreter is given: `-I` keeps a user's PYTHONPATH out.
START_ARGUMENTS = ("-I", "-m", START_MODULE)
# The console script of an environment, which is how a user runs the lifecycle commands.
COMMAND_NAME = "kinetis-docs"
SERVER_MODULE = "kinetis_mcp_docs.server"
