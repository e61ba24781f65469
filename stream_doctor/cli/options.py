"""Help texts and closed choices that several commands' options share."""

from __future__ import annotations

from enum import Enum

MAX_BYTES_HELP = "Refuse a capture larger than this once decompressed (bytes, or 512M, 2GiB; default 1GiB)."
MAX_FRAMES_HELP = "Refuse a capture of more frames than this (default 10,000,000)."

SELECT_HELP = (
    "Only these rule codes or prefixes (repeatable, or comma-separated; ALL for every rule). "
    "The most specific selector wins: --select SD3 --ignore SD30 --select SD301."
)
IGNORE_HELP = "Skip these rule codes or prefixes (repeatable, or comma-separated)."
EXTEND_SELECT_HELP = "Rule codes or prefixes to select on top of --select (or of the configuration's select)."
PER_FILE_IGNORES_HELP = "Skip these codes for captures matching GLOB, e.g. 'captures/relay/**:SD001' (repeatable)."
QUIET_HELP = "Print nothing on standard output; the exit code says it all (errors still go to standard error)."
LISTING_WIDTH_HELP = "Terminal width for the listing (else COLUMNS, else the terminal's)."
EXIT_ZERO_HELP = "Exit 0 even when findings reach --fail-on (2 still means stream-doctor could not run)."


class OutputFormat(str, Enum):
    terminal = "terminal"
    json = "json"
    jsonl = "jsonl"


class Level(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"
