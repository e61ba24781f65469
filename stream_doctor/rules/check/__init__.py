"""Rules of the check family: raised by ``stream-doctor check`` about a capture's expectations."""
