"""Accumulation stage: neutral events to an immutable AccumulatedStream."""
