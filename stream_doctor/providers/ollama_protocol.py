"""The words the Ollama adapter recognises a frame by, light enough for detection to read without
importing the adapter: ``/api/chat`` lines end with a boolean ``done``.
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

WORDS = Words(keys=frozenset({"done"}))
