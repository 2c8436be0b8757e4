"""The lifecycle commands, one module each — `setup`, `status`, `update`, `uninstall` —
that `cli.py` runs: each takes the environment and a `say` for its lines, and works
through the rooms below it (`install_dir`, `envs`, `clients`, `server_check`).
"""
