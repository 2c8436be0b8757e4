"""The install directory, everything in it but its environments: whether it is ours
(`ownership`) and safe to write (`safety`), claiming it and rolling a first install back
(`claim`), removing it (`removal`), and its small files, written without following a link
(`files`): the update lock, the daily throttle, the recorded package source. `advice`
words the commands a message names for it.
"""
