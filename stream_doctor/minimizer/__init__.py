"""Minimizing a capture: the smallest capture that still shows chosen findings (docs/minimize.md).

Pure library code, no CLI: ``run.minimize`` cuts the capture into frames (``units``), removes what
the findings do not need by delta debugging (``ddmin``), replaying every candidate with the engine
(``oracle``); ``redact`` replaces what a shared fixture must not show, ``fixture`` writes the test.
The public entry point is ``stream_doctor.minimize`` (``api.py``).
"""
