"""``stream-doctor check``: many captures at once, with configuration and expectations.

Not a pipeline stage: it finds captures (``discover``), reads the configuration (``stream_doctor.config``) and
each fixture's declared findings (``expectations``), replays every capture with
``engine/pipeline.replay`` and compares (``run``). Reporters render the ``CheckResult`` it returns.
"""

from __future__ import annotations

from stream_doctor.config import CheckError as CheckError  # re-exported: check raises it
from stream_doctor.config import parse_toml as parse_toml
