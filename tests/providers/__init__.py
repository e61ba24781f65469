"""Tests for the provider adapters: frames to neutral events."""
