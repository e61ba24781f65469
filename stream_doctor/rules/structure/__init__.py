"""Rules of the structure family."""
