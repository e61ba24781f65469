"""The words the Assistants adapter recognises a frame by, light enough for detection to read without
importing the adapter: the ``object`` of the thread family (``thread.run``, ``thread.run.step.delta`` …).
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

WORDS = Words(field="object", prefixes=("thread",))
