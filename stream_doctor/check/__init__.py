"""``stream-doctor check``: many captures at once, with configuration and expectations.

Not a pipeline stage: it finds captures (``discover``), reads the configuration (``config``) and
each fixture's declared findings (``expectations``), replays every capture with
``engine.replay`` and compares (``run``). Reporters render the ``CheckResult`` it returns.
"""

from __future__ import annotations


class CheckError(Exception):
    """``check`` cannot run at all (bad configuration, a path that does not exist): exit 2, one line."""
