"""Tests for the capture stage: bytes on disk to frames with positions."""
