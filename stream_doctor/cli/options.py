"""The options several commands share, each declared once (an ``Annotated`` type a command's field
or parameter takes), their help texts, and closed choices.

No ``from __future__ import annotations``: these are values typer reads, not annotations.
"""

from enum import Enum
from typing import Annotated, List, Optional

import typer

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
SESSION_HELP = (
    "Check each folder GLOB matches as one entry: its captures replayed as one conversation, in recorded "
    "(else file-name) order (repeatable; adds to the configuration's sessions)."
)
FORCE_HELP = "Replace an output file that exists even when stream-doctor cannot tell it wrote it."
CLIENT_MODE_HELP = (
    "How --client answers for a library: auto (run the installed library when it imports, else its model), "
    "run (require the library), model (never run it), both (run it, and where its model differs an info "
    "finding SD809)."
)
NODE_MODULES_HELP = (
    "A node_modules folder holding the TypeScript libraries --client runs under Node (@anthropic-ai/sdk, "
    "openai, ai); default: the project's own harness in a source checkout."
)
EXIT_ZERO_HELP = "Exit 0 even when findings reach --fail-on (2 still means stream-doctor could not run)."


class OutputFormat(str, Enum):
    terminal = "terminal"
    json = "json"
    jsonl = "jsonl"


class Level(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"


Select = Annotated[List[str], typer.Option("--select", metavar="CODES", help=SELECT_HELP)]
Ignore = Annotated[List[str], typer.Option("--ignore", metavar="CODES", help=IGNORE_HELP)]
ExtendSelect = Annotated[List[str], typer.Option("--extend-select", metavar="CODES", help=EXTEND_SELECT_HELP)]
PerFileIgnores = Annotated[
    List[str], typer.Option("--per-file-ignores", metavar="GLOB:CODES", help=PER_FILE_IGNORES_HELP)
]
Sessions = Annotated[List[str], typer.Option("--session", metavar="GLOB", help=SESSION_HELP)]
Isolated = Annotated[bool, typer.Option("--isolated", help="Use no configuration file.")]
ReportWidth = Annotated[
    Optional[int], typer.Option("--width", min=1, metavar="COLUMNS", help="Terminal width for the report.")
]
MaxRows = Annotated[
    int, typer.Option("--max-rows", min=0, help="Rows per list in text reports before a '… N more' line (0: all).")
]
MaxBytes = Annotated[Optional[str], typer.Option("--max-bytes", help=MAX_BYTES_HELP)]
MaxFrames = Annotated[Optional[int], typer.Option("--max-frames", min=1, help=MAX_FRAMES_HELP)]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)]
ClientMode = Annotated[str, typer.Option("--client-mode", metavar="MODE", help=CLIENT_MODE_HELP)]
NodeModules = Annotated[Optional[str], typer.Option("--node-modules", metavar="DIR", help=NODE_MODULES_HELP)]
ExitZero = Annotated[bool, typer.Option("--exit-zero", help=EXIT_ZERO_HELP)]
Force = Annotated[bool, typer.Option("--force", help=FORCE_HELP)]
