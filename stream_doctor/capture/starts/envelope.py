"""The envelope's start: JSON Lines whose records open with their ``"sd"`` kind."""

from __future__ import annotations

import re

from stream_doctor.capture.starts.jsonl import could_be as could_be

#: A record's start.
RECORD = re.compile(rb'\s*\{\s*"sd"\s*:')
