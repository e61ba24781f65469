"""Rules of the termination family."""
