"""Rules of the execution family."""
