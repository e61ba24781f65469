"""Rules of the capture family."""
