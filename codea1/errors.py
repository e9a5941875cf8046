import errno
import shutil

"""Errors a user can cause. The CLI prints them as one sentence and exits non-zero, no traceback."""


class UserError(Exception):
    """A mistake in the user's input (config, dataset, path, model name...).

    The message must be one clear sentence naming the file/field at fault and, where possible, the fix.
    """

    exit_code = 2

    def __init__(self, message: str = "", *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


STORAGE_ERRNOS = {
    "ENOSPC": "the disk is full",
    "EDQUOT": "the disk quota is exceeded",
    "EROFS": "the file system is read-only",
    "EFBIG": "a file grew beyond the file system's limit",
}
STORAGE_MESSAGES = (
    "no space left on device",
    "disk is full",
    "quota exceeded",
    "read-only file system",
    "file write failed",
    "failed writing",
)


LOW_SPACE_BYTES = 16 << 20  # a write that failed with less than this left on its file system: a full disk


def storage_failure(exc: BaseException, path: object = None) -> str | None:
    """Why `exc` is a failure to write to storage ("the disk is full", ...), or None when it is not one.

    Libraries report a full disk in their own ways: OSError with errno ENOSPC (Python's own writes),
    sqlite3.OperationalError "database or disk is full" (the Mistake Book), safetensors' SafetensorError
    with the OS message inside, and torch.save's RuntimeError ("iostream error", "unexpected pos") with
    none. Given the `path` being written, an error of those kinds with less than LOW_SPACE_BYTES free on
    its file system is taken for a full disk too."""

    write_error = isinstance(exc, (OSError, RuntimeError)) or type(exc).__name__ == "SafetensorError"
    if path is not None and write_error:
        try:
            if shutil.disk_usage(str(path)).free < LOW_SPACE_BYTES:
                return "the disk is full"
        except OSError:
            pass

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno is not None:
            for name, reason in STORAGE_ERRNOS.items():
                if exc.errno == getattr(errno, name, None):
                    return reason
        text = str(exc).lower()
        if isinstance(exc, (OSError, RuntimeError)) or type(exc).__name__ in ("SafetensorError", "OperationalError"):
            for marker in STORAGE_MESSAGES:
                if marker in text:
                    return (
                        "the disk is full"
                        if marker in ("no space left on device", "disk is full", "file write failed", "failed writing")
                        else marker
                    )
        exc = exc.__cause__ or exc.__context__
    return None
