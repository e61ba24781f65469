"""stream-doctor: replay captured LLM streams and diagnose how their tool calls were assembled."""

from __future__ import annotations

__version__ = "0.1.0"
