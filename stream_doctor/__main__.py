"""Allow ``python -m stream_doctor``."""

from __future__ import annotations

from stream_doctor.launch import main

main()
