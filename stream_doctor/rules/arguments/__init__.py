"""Rules of the arguments family."""
