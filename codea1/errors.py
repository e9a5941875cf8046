"""Errors a user can cause. The CLI prints them as one sentence and exits non-zero, no traceback."""


class UserError(Exception):
    """A mistake in the user's input (config, dataset, path, model name...).

    The message must be one clear sentence naming the file/field at fault and, where possible, the fix.
    """

    exit_code = 2
