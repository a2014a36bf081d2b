"""Output files written whole or not at all, and Ctrl-C (docs/errors.md#whose-mistake-the-exit-code-says).

Imported by the command line before anything else, so it imports nothing of nanopto's."""

from __future__ import annotations

import os
import stat
import tempfile


def write_whole_file(path: str, text: str) -> None:
    """`path` with `text`, or unchanged: written to a temporary file in the same directory, then
    renamed over `path` (OSError when it cannot be written)."""
    if os.path.exists(path) and not os.path.isfile(path):  # -o /dev/null, a FIFO: nothing to replace
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        return
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".nanopto-", suffix=".tmp", dir=directory)
    try:
        with open(handle, "w", encoding="utf-8") as out:
            out.write(text)
        if os.path.exists(path):  # keep the permissions of the file it replaces
            os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


class Interrupted(BaseException):
    """The user pressed Ctrl-C: the command line's SIGINT handler raises this, so that a rules
    file's own `raise KeyboardInterrupt` stays what it is, a failure of the user's code."""
