"""Command line: turns options into an Options object, runs the engine, picks a reporter and exit code.

Heavy imports happen inside the commands, so ``stream-doctor --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import TYPE_CHECKING, Any, List, NoReturn, Optional

import typer

from stream_doctor import __version__

if TYPE_CHECKING:
    from stream_doctor.report import CheckResult
    from stream_doctor.reporters import RenderOptions

EXIT_OK, EXIT_FINDINGS, EXIT_COULD_NOT_RUN = 0, 1, 2

app = typer.Typer(
    name="stream-doctor",
    help="Replay captured LLM streams and diagnose how their tool calls were reassembled.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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
EXIT_ZERO_HELP = "Exit 0 even when findings reach --fail-on (2 still means stream-doctor could not run)."


class OutputFormat(str, Enum):
    terminal = "terminal"
    json = "json"
    jsonl = "jsonl"


class Level(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stream-doctor {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Replay captured LLM streams and diagnose how their tool calls were reassembled."""


@app.command()
def replay(
    capture: str = typer.Argument(
        ...,
        help="Capture file (.sse, .jsonl, .json, .har, a VCR cassette, optionally gzip-compressed), or - for stdin.",
    ),
    call: Optional[str] = typer.Option(
        None, "--call", help="Show one call (by id or number): its fragments and reassembled input."
    ),
    timeline: bool = typer.Option(
        False, "--timeline", help="Show every event with its position (runs of deltas folded)."
    ),
    output: str = typer.Option(
        "terminal",
        "--format",
        "-f",
        metavar="FORMAT",
        help="Report format: terminal, json, jsonl or html (a self-contained page: use with -o report.html).",
    ),
    container: Optional[str] = typer.Option(
        None,
        "--container",
        "--input-format",
        metavar="FORMAT",
        help="Force the capture format: sse, jsonl, envelope, json, eventstream, prefixed, har, vcr, recording.",
    ),
    provider: Optional[str] = typer.Option(
        None, "--provider", metavar="NAME", help="Force the provider (e.g. anthropic)."
    ),
    tools: Optional[str] = typer.Option(
        None,
        "--tools",
        metavar="FILE",
        help="Tool definitions (JSON or YAML) to validate calls against when no request declares them.",
    ),
    executed: List[str] = typer.Option(
        [],
        "--executed",
        metavar="CALL=JSON",
        help="What your application ran, told after the fact: a call (number in the table, id or tool name) "
        "and the input it ran with, e.g. --executed 1='{}' (repeatable). Runs the execution checks (SD1xx).",
    ),
    executions: Optional[str] = typer.Option(
        None,
        "--executions",
        metavar="FILE",
        help="A JSONL file of execute records (call_id or name, input) to add to the capture.",
    ),
    client: List[str] = typer.Option(
        [],
        "--client",
        metavar="NAME",
        help="Also predict what this client would hand the tool, per call (repeatable, or all; "
        "`stream-doctor clients` lists them). Differences are findings SD801-SD808.",
    ),
    fail_on: Optional[str] = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 when a finding reaches this severity: info, warning, error (default: error).",
    ),
    select: List[str] = typer.Option([], "--select", metavar="CODES", help=SELECT_HELP),
    ignore: List[str] = typer.Option([], "--ignore", metavar="CODES", help=IGNORE_HELP),
    extend_select: List[str] = typer.Option([], "--extend-select", metavar="CODES", help=EXTEND_SELECT_HELP),
    per_file_ignores: List[str] = typer.Option(
        [], "--per-file-ignores", metavar="GLOB:CODES", help=PER_FILE_IGNORES_HELP
    ),
    width: Optional[int] = typer.Option(
        None, "--width", min=1, metavar="COLUMNS", help="Terminal width for the report."
    ),
    color: Optional[bool] = typer.Option(
        None, "--color/--no-color", help="Force colour on or off (default: on for a terminal)."
    ),
    config: Optional[str] = typer.Option(
        None,
        "--config",
        metavar="FILE",
        help="Use this configuration file; by default the one nearest the capture's folder is used.",
    ),
    isolated: bool = typer.Option(False, "--isolated", help="Use no configuration file."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    exit_zero: bool = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP),
    output_file: Optional[str] = typer.Option(
        None, "--output-file", "-o", metavar="PATH", help="Write the report to PATH instead of standard output."
    ),
    max_rows: int = typer.Option(
        200, "--max-rows", min=0, help="Rows per list in text reports before a '… N more' line (0: all)."
    ),
    max_bytes: Optional[str] = typer.Option(None, "--max-bytes", help=MAX_BYTES_HELP),
    max_frames: Optional[int] = typer.Option(None, "--max-frames", min=1, help=MAX_FRAMES_HELP),
    statistics: bool = typer.Option(
        False, "--statistics", help="Print how many findings of each code instead of the report."
    ),
) -> None:
    """Replay one capture through the reference accumulator and report every problem."""
    import importlib

    from stream_doctor.api import replay as run
    from stream_doctor.engine import RunError
    from stream_doctor.reporters import FORMATS, REPLAY_FORMATS

    limits = _limits(max_bytes, max_frames)
    output = _choice(output, FORMATS, "--format", "format")
    fail_on = _choice(fail_on, ("info", "warning", "error"), "--fail-on", "severity") if fail_on else None
    try:
        report = run(
            capture,
            provider=provider,
            container=container,
            tools=tools,
            select=select,
            ignore=ignore,
            extend_select=extend_select,
            per_file_ignores=_per_file_ignores(per_file_ignores),
            fail_on=fail_on,
            config=False if isolated else (config if config is not None else True),
            keep_events=timeline or output == "html",  # the HTML timeline shows every event
            executed=executed,
            executions_file=executions,
            clients=client,
            **limits,
        )
    except (RunError, ValueError) as error:
        _fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        if os.environ.get("STREAM_DOCTOR_DEBUG"):
            raise
        _fail(f"{capture}: internal error {type(error).__name__}: {error} (set STREAM_DOCTOR_DEBUG=1 for a traceback)")
    if call is not None:
        from stream_doctor.report import UnknownCall

        try:
            report = report.select(call)
        except UnknownCall as error:
            _fail(f"{report.path}: {error}")
    if output == "terminal" and output_file is None:
        options = _render_options(width, color, timeline=timeline, max_rows=max_rows)
    else:
        from stream_doctor.reporters import RenderOptions

        # no console (rich) for machine output; a file gets plain text
        options = RenderOptions(width=width or 100, max_rows=max_rows, timeline=timeline)
    if statistics:
        from stream_doctor.reporters import statistics as counts

        render = counts.render if output == "terminal" else counts.render_json
    else:
        render = importlib.import_module(f"stream_doctor.reporters.{REPLAY_FORMATS[output]}").render
    from stream_doctor.reporters import MissingExtra

    try:
        text = render(report, options)
    except MissingExtra as error:
        _fail(str(error))
    _emit(text, output_file, quiet, (capture,))
    raise typer.Exit(EXIT_FINDINGS if report.failed and not exit_zero else EXIT_OK)


@app.command()
def convert(
    capture: str = typer.Argument(
        ..., help="Any capture stream-doctor reads (a HAR file, a cassette …), or - for stdin."
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the envelope here (default: stdout)."),
    container: Optional[str] = typer.Option(None, "--container", help="Force the capture format."),
    provider: Optional[str] = typer.Option(None, "--provider", help="Force the provider (e.g. anthropic)."),
    max_bytes: Optional[str] = typer.Option(None, "--max-bytes", help=MAX_BYTES_HELP),
    max_frames: Optional[int] = typer.Option(None, "--max-frames", min=1, help=MAX_FRAMES_HELP),
) -> None:
    """Rewrite a capture as a stream-doctor envelope (JSONL) that replays to the same findings."""
    from stream_doctor.engine import RunError
    from stream_doctor.engine import convert as run
    from stream_doctor.options import Options

    to_file = output is not None and output != "-"
    if output is not None and to_file:
        _refuse_inputs(output, (capture,))
    try:
        data = run(capture, Options(container=container, provider=provider, **_limits(max_bytes, max_frames)))
    except RunError as error:
        _fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        if os.environ.get("STREAM_DOCTOR_DEBUG"):
            raise
        _fail(f"{capture}: internal error {type(error).__name__}: {error} (set STREAM_DOCTOR_DEBUG=1 for a traceback)")
    if output is None or not to_file:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    _write_file(output, data, "cannot write the envelope", (capture,))


@app.command()
def check(
    paths: Optional[List[str]] = typer.Argument(
        None,
        metavar="PATH...",
        help="Capture files, folders (searched recursively, captures recognised by content) or globs; "
        "- reads the paths from standard input, one a line.",
    ),
    select: List[str] = typer.Option([], "--select", metavar="CODES", help=SELECT_HELP),
    ignore: List[str] = typer.Option([], "--ignore", metavar="CODES", help=IGNORE_HELP),
    extend_select: List[str] = typer.Option([], "--extend-select", metavar="CODES", help=EXTEND_SELECT_HELP),
    per_file_ignores: List[str] = typer.Option(
        [], "--per-file-ignores", metavar="GLOB:CODES", help=PER_FILE_IGNORES_HELP
    ),
    fail_on: Optional[str] = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Fail on an unexpected finding of this severity or above: info, warning, error (default: error).",
    ),
    report: List[str] = typer.Option(
        [],
        "--report",
        "-r",
        metavar="FORMAT[:PATH]",
        help="terminal, json, jsonl, junit, sarif, github, markdown or statistics, written to PATH or standard output "
        "(repeatable).",
    ),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=0, help="Replay in N processes (0: one per CPU)."),
    provider: Optional[str] = typer.Option(
        None, "--provider", metavar="NAME", help="Force the provider for every capture."
    ),
    container: Optional[str] = typer.Option(
        None, "--container", metavar="FORMAT", help="Force the capture format for every capture."
    ),
    config: Optional[str] = typer.Option(None, "--config", help="Use this configuration file; do not search."),
    isolated: bool = typer.Option(False, "--isolated", help="Use no configuration file."),
    respect_gitignore: bool = typer.Option(
        True,
        "--respect-gitignore/--no-respect-gitignore",
        help="Skip what .gitignore files list when searching folders and globs (default: on).",
    ),
    update_expectations: bool = typer.Option(
        False, "--update-expectations", help="Rewrite the .expect.toml of each failing capture to what it shows now."
    ),
    width: Optional[int] = typer.Option(
        None, "--width", min=1, metavar="COLUMNS", help="Terminal width for the report."
    ),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off."),
    max_rows: int = typer.Option(
        200, "--max-rows", min=0, help="Rows per list in text reports before a '… N more' line (0: all)."
    ),
    max_bytes: Optional[str] = typer.Option(None, "--max-bytes", help=MAX_BYTES_HELP),
    max_frames: Optional[int] = typer.Option(None, "--max-frames", min=1, help=MAX_FRAMES_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    exit_zero: bool = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP),
    output_file: Optional[str] = typer.Option(
        None,
        "--output-file",
        "-o",
        metavar="PATH",
        help="Write the report that would go to standard output to PATH instead.",
    ),
    statistics: bool = typer.Option(
        False, "--statistics", help="On standard output, how many findings of each code instead of the report."
    ),
) -> None:
    """Check many captures against their expected findings; write reports for CI."""
    from stream_doctor.check import CheckError
    from stream_doctor.check.progress import progress
    from stream_doctor.check.run import execute, prepare
    from stream_doctor.findings import Severity
    from stream_doctor.options import CheckOptions

    targets = _report_targets(report, "statistics" if statistics else "terminal")
    severity = _choice(fail_on, ("info", "warning", "error"), "--fail-on", "severity") if fail_on else None
    options = CheckOptions(
        paths=_paths(paths or []),
        select=_codes(select) or None,
        ignore=_codes(ignore) or None,
        extend_select=_codes(extend_select),
        per_file_ignores=tuple(_per_file_ignores(per_file_ignores).items()),
        fail_on=Severity.parse(severity) if severity else None,
        provider=provider,
        container=container,
        jobs=jobs,
        config=config,
        isolated=isolated,
        respect_gitignore=respect_gitignore,
        update_expectations=update_expectations,
        keep_reports=any(name == "json" for name, _ in targets),
        **_limits(max_bytes, max_frames),
    )
    try:
        plan = prepare(options)
    except CheckError as error:
        _fail(str(error))
    inputs = _inputs(plan)
    for path in [path for _, path in targets if path is not None] + ([output_file] if output_file else []):
        _refuse_inputs(path, inputs)  # before the replays: a report must never replace a capture
    with progress(len(plan.tasks), enabled=sys.stdout.isatty() and sys.stderr.isatty()) as advance:
        try:
            result = execute(plan, advance)
        except CheckError as error:  # a sidecar that cannot be written
            _fail(str(error))
    _write_reports(result, targets, width, color, max_rows, quiet, output_file, inputs)
    raise typer.Exit(EXIT_FINDINGS if result.failed and not exit_zero else EXIT_OK)


def _paths(given: list[str]) -> tuple[str, ...]:
    """The PATH arguments; ``-`` stands for the paths standard input lists, one a line (``git ls-files | …``)."""
    if "-" not in given:
        return tuple(given)
    listed = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
    return tuple(path for item in given for path in (listed if item == "-" else [item]))


@app.command()
def scan(
    inputs: List[str] = typer.Argument(
        ...,
        metavar="INPUT...",
        help="Folders, files, globs or fsspec URLs (memory://, s3://, gcs:// … as installed); "
        "with --body-column, tables (Parquet, or JSONL with one capture per row).",
    ),
    out: str = typer.Option(
        "scan-findings.parquet", "--out", "-o", metavar="PATH", help="Findings table (Parquet), one row per finding."
    ),
    status: Optional[str] = typer.Option(
        None,
        "--status",
        metavar="PATH",
        help="Per-capture status table (Parquet; default: beside --out, *.status.parquet).",
    ),
    summary: List[str] = typer.Option(
        [],
        "--summary",
        metavar="PATH",
        help="Write the summary to PATH too: Markdown (.md) or JSON (.json); repeatable.",
    ),
    body_column: Optional[str] = typer.Option(
        None, "--body-column", metavar="COLUMN", help="The inputs are tables; this column holds each raw streamed body."
    ),
    id_column: Optional[str] = typer.Option(
        None, "--id-column", metavar="COLUMN", help="Table column with the request id."
    ),
    model_column: Optional[str] = typer.Option(
        None, "--model-column", metavar="COLUMN", help="Table column with the model (when the stream does not name it)."
    ),
    meta_column: List[str] = typer.Option(
        [],
        "--meta-column",
        metavar="COLUMN",
        help="Table column carried into every finding and status row (repeatable).",
    ),
    scheduler: Optional[str] = typer.Option(
        None,
        "--scheduler",
        metavar="ADDRESS",
        help="Address of a running Dask scheduler (tcp://host:8786); default: a local cluster.",
    ),
    workers: Optional[int] = typer.Option(
        None, "--workers", min=1, metavar="N", help="Worker processes of the local cluster."
    ),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", min=1, metavar="N", help="Captures per task."),
    sample: Optional[int] = typer.Option(None, "--sample", min=1, metavar="N", help="Scan N captures drawn at random."),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of --sample."),
    resume: bool = typer.Option(False, "--resume", help="Keep the outputs and scan only the captures they lack."),
    provider: Optional[str] = typer.Option(
        None, "--provider", metavar="NAME", help="Force the provider for every capture."
    ),
    container: Optional[str] = typer.Option(
        None, "--container", metavar="FORMAT", help="Force the capture format for every capture."
    ),
    select: List[str] = typer.Option(
        [], "--select", metavar="CODES", help="Only these rule codes or prefixes (repeatable, or comma-separated)."
    ),
    ignore: List[str] = typer.Option(
        [], "--ignore", metavar="CODES", help="Skip these rule codes or prefixes (repeatable, or comma-separated)."
    ),
    fail_on: Optional[Level] = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 when a finding reaches this severity: info, warning, error (default: a scan never fails).",
    ),
    width: Optional[int] = typer.Option(
        None, "--width", min=1, metavar="COLUMNS", help="Terminal width for the summary."
    ),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off."),
) -> None:
    """Scan a dataset of logged streams on Dask: findings as Parquet, a status per capture, a summary."""
    from stream_doctor.findings import Severity
    from stream_doctor.scan import ScanError
    from stream_doctor.scan.options import ScanOptions

    for path in summary:
        if not path.endswith((".md", ".json")):
            _fail(f"--summary {path}: name a .md (Markdown) or .json file")
    options = ScanOptions(
        inputs=tuple(inputs),
        out=out,
        status=status,
        summaries=tuple(summary),
        body_column=body_column,
        id_column=id_column,
        model_column=model_column,
        meta_columns=tuple(meta_column),
        scheduler=scheduler,
        workers=workers,
        batch_size=batch_size,
        sample=sample,
        seed=seed,
        resume=resume,
        provider=provider,
        container=container,
        select=_codes(select),
        ignore=_codes(ignore),
        fail_on=Severity.parse(fail_on.value) if fail_on else None,
    )
    try:
        from stream_doctor.scan.cli import run_scan

        code = run_scan(options, _render_options(width, color))
    except ScanError as error:
        _fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        if os.environ.get("STREAM_DOCTOR_DEBUG"):
            raise
        _fail(f"scan: internal error {type(error).__name__}: {error} (set STREAM_DOCTOR_DEBUG=1 for a traceback)")
    raise typer.Exit(code)


def _report_targets(values: list[str], default: str = "terminal") -> list[tuple[str, str | None]]:
    """``FORMAT[:PATH]`` options; standard output gets ``default`` (the terminal report) when no report goes there."""
    from stream_doctor.reporters import CHECK_FORMATS

    targets: list[tuple[str, str | None]] = []
    for value in values:
        name, _, path = value.partition(":")
        if name.lower() not in CHECK_FORMATS:
            _fail(f"--report {value}: unknown format {name!r} (choose from {', '.join(CHECK_FORMATS)})")
        targets.append((name.lower(), path or None))
    on_stdout = [name for name, path in targets if path is None]
    if not on_stdout:
        targets.insert(0, (default, None))
    elif default != "terminal":  # --statistics: in place of the terminal report on standard output
        targets = [(default if (name, path) == ("terminal", None) else name, path) for name, path in targets]
    if os.environ.get("GITHUB_ACTIONS") == "true" and set(on_stdout) <= {"terminal", "statistics"}:
        if all(name != "github" for name, _ in targets):
            targets.append(("github", None))  # annotations on the run and the pull request, for free
    return targets


def _write_reports(
    result: CheckResult,
    targets: list[tuple[str, str | None]],
    width: int | None,
    color: bool | None,
    max_rows: int,
    quiet: bool = False,
    output_file: str | None = None,
    inputs: list[str] | None = None,
) -> None:
    import importlib

    from stream_doctor.reporters import CHECK_FORMATS, RenderOptions

    for name, path in targets:
        module = importlib.import_module(f"stream_doctor.reporters.{CHECK_FORMATS[name]}")
        # standard output gets the terminal's width and colours; a file, plain text
        if path is None and output_file is not None:
            path = output_file
        if path is None:
            options = _render_options(width, color, max_rows=max_rows)
        else:
            options = RenderOptions(width=width or 100, max_rows=max_rows)
        text = module.render(result, options)
        if path is None:
            if not quiet:
                sys.stdout.write(text)
            continue
        _write_file(path, text, f"cannot write the {name} report", inputs or ())


@app.command()
def record(
    upstream: str = typer.Option(
        ..., "--upstream", metavar="URL", help="Where to forward every request, e.g. https://api.anthropic.com."
    ),
    listen: str = typer.Option(
        "127.0.0.1:8080", "--listen", metavar="HOST:PORT", help="Where to listen; point your client's base URL here."
    ),
    out: str = typer.Option(..., "--out", metavar="DIR", help="Folder for the envelopes, one per exchange."),
    redact: List[str] = typer.Option(
        [], "--redact", metavar="HEADER", help="Also keep this header's value out of the envelopes (repeatable)."
    ),
) -> None:
    """Record every exchange through a reverse proxy, one envelope each, for `stream-doctor replay`.

    Requests are forwarded unchanged and responses streamed back as they arrive; credentials
    (authorization, x-api-key, api-key, ?key= …) are never written.
    """
    from urllib.parse import urlsplit

    host, _, port_text = listen.rpartition(":")
    if not host or not port_text.isdigit() or int(port_text) > 65535:
        _fail(f"--listen {listen}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        _fail(f"--upstream {upstream}: expected an http:// or https:// URL")
    try:
        from stream_doctor.record.proxy import ProxyConfig, run
    except ImportError as error:
        _fail(f"stream-doctor record needs the record extra ({error.name}): pip install 'stream-doctor[record]'")
    config = ProxyConfig(
        upstream,
        out,
        frozenset(name.strip().lower() for name in redact if name.strip()),
        log=lambda line: typer.echo(line, err=True),
    )
    try:
        run(config, host.strip("[]"), int(port_text))
    except OSError as error:
        _fail(f"--listen {listen}: {error.strerror or error}")


@app.command()
def clients(
    output: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f", help="Output format."),
) -> None:
    """List the client profiles `replay --client` takes: what each models, its version and source."""
    from stream_doctor.clients import PROFILES
    from stream_doctor.reporters import clients_doc

    if output is OutputFormat.json:
        sys.stdout.write(clients_doc.render_json(PROFILES))
    else:
        sys.stdout.write(clients_doc.render(PROFILES, _render_options(None, None)))


@app.command()
def rules(
    output: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f", help="Output format."),
) -> None:
    """List every rule: code, name, severity, summary."""
    from stream_doctor.check.rules import CHECK_RULES
    from stream_doctor.reporters import rules_doc
    from stream_doctor.rules import RULES

    every = sorted((*RULES, *CHECK_RULES), key=lambda r: r.code)  # SD000 and SD900 come from `check`
    if output is OutputFormat.json:
        sys.stdout.write(rules_doc.render_json(every, _render_options(None, None)))
    else:
        sys.stdout.write(rules_doc.render(every, _render_options(None, None)))


@app.command()
def explain(code: str = typer.Argument(..., help="A rule code (SD201) or name (unparseable-arguments).")) -> None:
    """Print one rule's documentation."""
    from stream_doctor.reporters import rules_doc
    from stream_doctor.rules import RULES, lookup

    found = lookup(code)
    if found is None:  # check's own rules (SD000, SD900) are documented too
        from stream_doctor.check.rules import lookup as lookup_check_rule

        found = lookup_check_rule(code)
    if found is None:
        _fail(f"no rule {code!r}; `stream-doctor rules` lists them ({RULES[0].code}…{RULES[-1].code})")
    sys.stdout.write(rules_doc.render_rule(found, _render_options(None, None)))


def _limits(max_bytes: str | None, max_frames: int | None) -> dict[str, Any]:
    """``--max-bytes`` / ``--max-frames`` as Options fields (only those given)."""
    from stream_doctor.capture.limits import parse_size

    given: dict[str, Any] = {}
    if max_bytes is not None:
        try:
            given["max_bytes"] = parse_size(max_bytes)
        except ValueError:
            _fail(f"--max-bytes {max_bytes}: not a size (give bytes, or a number with K, M or G)")
    if max_frames is not None:
        given["max_frames"] = max_frames
    return given


def _choice(value: str, choices: tuple[str, ...], option: str, what: str) -> str:
    """A closed set of names, refused with "did you mean" (exit 2) like every other option."""
    from stream_doctor.selection import check_choice

    try:
        return check_choice(value.lower(), choices, what)
    except ValueError as error:
        _fail(f"{option}: {error}")


def _per_file_ignores(values: list[str]) -> dict[str, tuple[str, ...]]:
    from stream_doctor.selection import parse_per_file_ignores

    try:
        return parse_per_file_ignores(values)
    except ValueError as error:
        _fail(str(error))


def _emit(text: str, output_file: str | None, quiet: bool, inputs: tuple[str, ...] = ()) -> None:
    """The report on standard output, or in ``--output-file`` (written even with --quiet)."""
    if output_file is not None and output_file != "-":
        _write_file(output_file, text, "cannot write the report", inputs)
    elif not quiet:
        sys.stdout.write(text)


def _write_file(path: str, data: str | bytes, what: str, inputs: tuple[str, ...] | list[str] = ()) -> None:
    """Write an output through a temporary file and a rename (see ``atomic``); a failure is one line, exit 2."""
    from stream_doctor.atomic import OutputError, write

    try:
        write(path, data, inputs)
    except OutputError as error:
        _fail(f"{path}: {what}: {error}" if "input" not in str(error) else f"{path}: {error}")


def _refuse_inputs(path: str, inputs: tuple[str, ...] | list[str]) -> None:
    from stream_doctor.atomic import OutputError, refuse_inputs

    try:
        refuse_inputs(path, inputs)
    except OutputError as error:
        _fail(f"{path}: {error}")


def _inputs(plan: Any) -> list[str]:
    """Every file a check run reads: captures, their sidecars, the configuration."""
    from stream_doctor.check.expectations import sidecar_path

    paths = [task.path for task in plan.tasks] + [sidecar_path(task.path) for task in plan.tasks]
    return paths + ([plan.config.path] if plan.config.path else [])


def _codes(values: list[str]) -> tuple[str, ...]:
    return tuple(part.strip().upper() for value in values for part in value.split(",") if part.strip())


def _render_options(
    width: int | None, color: bool | None, timeline: bool = False, max_rows: int = 200
) -> RenderOptions:
    """Render for standard output: its width and colours as rich detects them, unless forced."""
    from rich.console import Console

    from stream_doctor.reporters import RenderOptions

    if color is None:
        console = Console(width=width, highlight=False)
    else:
        console = Console(width=width, highlight=False, no_color=not color, force_terminal=color)
    colored = console.is_terminal and not console.no_color
    return RenderOptions(width=console.width, color_system=console.color_system if colored else None, timeline=timeline)


def _fail(message: str) -> NoReturn:
    typer.echo(f"stream-doctor: error: {message}", err=True)
    raise typer.Exit(EXIT_COULD_NOT_RUN)


def main() -> None:
    app()
