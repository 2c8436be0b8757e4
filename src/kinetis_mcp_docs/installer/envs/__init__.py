"""The virtual environments of an install directory, `DIR/envs/<name>`.

Shared by setup and the spawn-time updater, so both take one path (`candidate`): build a
new environment beside the installed one (`build`, with `pip`), check it, switch `current`
to it with one atomic rename (`links`). The environment that serves is never modified, so
a process killed at any instant leaves a working install. Around that: which environments
this installer built and may remove (`built`), what one holds (`metadata`), byte-compiling
it outside pip (`bytecode`), and what an update would install (`resolve`). `environment`
is one of them, with the layout it lives in.
"""
