"""Shared helpers that know no stage: the atomic writer, the guarded opener, JSON text, the lazy
registry, what marks a credential, the collector pause, how findings quote a capture, the release's version.
"""
