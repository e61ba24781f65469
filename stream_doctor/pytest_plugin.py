"""pytest plugin (entry point ``pytest11``): replay captures inside a project's own tests.

The plugin loads in every pytest session of anyone who installed stream-doctor, so it imports
nothing but pytest here; the engine and the reporters are imported when a test uses them. ::

    def test_agent_stream_is_clean(stream_doctor):
        stream_doctor.assert_clean("tests/captures/search.sse")

    def test_the_fixture_still_shows_its_bug(stream_doctor):
        stream_doctor.assert_clean("tests/captures/empty_input.jsonl", expect=["SD102"])

    def test_report(stream_doctor, snapshot):  # with syrupy
        assert stream_doctor.json_report("tests/captures/search.sse") == snapshot

    @pytest.mark.stream_doctor_serve("tests/captures/empty_input.yaml")
    def test_my_agent_sends_back_what_it_was_served(stream_doctor_server):
        run_my_agent(base_url=stream_doctor_server.url)  # the application, with its own SDK
        assert stream_doctor_server.worst() is None, stream_doctor_server.report()
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import pytest

if TYPE_CHECKING:
    from stream_doctor.serve.running import RunningServer
    from stream_doctor.values.report import Report

OPTION_NAMES = (
    "provider",
    "container",
    "fail_on",
    "select",
    "ignore",
    "extend_select",
    "per_file_ignores",
    "tools",
    "executions",
    "config",
)


class StreamDoctor:
    """What the ``stream_doctor`` fixture gives a test.

    Relative capture paths are relative to pytest's rootdir (not to where pytest was started), and
    the project's configuration (``[tool.stream-doctor]`` nearest to each capture) applies, as in
    ``stream-doctor check``; ``config=False`` ignores it, ``config="path.toml"`` names one.
    """

    def __init__(self, rootdir: str | os.PathLike[str] | None = None) -> None:
        self.rootdir = os.fspath(rootdir) if rootdir is not None else None

    def path(self, path: str | os.PathLike[str]) -> str:
        """A capture path as the plugin reads it: relative to the rootdir, shown relative to the working directory."""
        given = os.fspath(path)
        if self.rootdir is None or os.path.isabs(given) or given == "-":
            return given
        resolved = os.path.join(self.rootdir, given)
        try:
            return os.path.relpath(resolved)
        except ValueError:  # another drive, on Windows
            return resolved

    def replay(self, path: str | os.PathLike[str], **options: Any) -> Report:
        """The replay report of one capture: ``stream_doctor.replay`` (docs/api.md) with the same options.

        A capture that cannot be replayed at all raises ``stream_doctor.RunError``.
        """
        return self._replay(self.path(path), options)

    def _replay(self, capture: str, options: dict[str, Any]) -> Report:
        from stream_doctor.api import replay

        unknown = sorted(set(options) - set(OPTION_NAMES))
        if unknown:
            raise TypeError(f"unknown stream-doctor option {unknown[0]!r} (use {', '.join(OPTION_NAMES)})")
        return replay(capture, **{"config": True, **options})

    def assert_clean(self, path: str | os.PathLike[str], expect: Iterable[str] | None = None, **options: Any) -> Report:
        """Fail the test, showing the rendered findings, unless the capture shows exactly what is expected.

        ``expect`` lists the codes the capture must produce (each must appear; nothing else at or
        above ``fail_on`` may). Without it, what ``stream-doctor check`` would expect is used: the
        configuration's ``expect`` for this path, the ``.expect.toml`` sidecar, and the codes an
        envelope's header lists in ``"expect"``; otherwise nothing is expected.
        """
        from stream_doctor.config import expectations
        from stream_doctor.engine.stages import RunError
        from stream_doctor.values.findings import Location

        capture = self.path(path)
        try:
            report = self._replay(capture, options)
        except RunError as error:
            pytest.fail(f"stream-doctor could not replay {error}", pytrace=False)
        if expect is None:
            declared = (
                _configured_expectations(capture, options.get("config", True))
                + expectations.load_sidecar(capture)
                + expectations.from_header(capture, report.stream.capture.header)
            )
        else:
            where = Location("the test's expect=")
            declared = tuple(expectations.parse_entry(code, "expect=", where, "expect=") for code in expect)
        verdict = expectations.compare(capture, report.findings, declared, expectations.selector(report.options))
        failures = [f for f in verdict.unexpected if f.severity >= report.options.fail_on]
        if failures:
            stale = [f"  {f.code} {f.name}: {f.message}" for f in verdict.unexpected if f.code == "SD900"]
            text = _render_terminal(report)
            if stale:
                text += "\nexpected findings that did not appear:\n" + "\n".join(stale) + "\n"
            pytest.fail(f"stream-doctor: {capture} does not show what was expected\n\n{text}", pytrace=False)
        return report

    def json_report(self, path: str | os.PathLike[str], **options: Any) -> dict[str, Any]:
        """The JSON report (``replay --format json``) as Python values, as ``Report.to_dict()`` gives
        it, credentials masked: deterministic, so fit for a syrupy snapshot, and indexable in a test
        (``["findings"]``; issue 36: it had been the text, where a user indexed a dict)."""
        from stream_doctor.engine.redaction import redacted

        return redacted(self.replay(path, **options)).to_dict()

    def terminal_report(self, path: str | os.PathLike[str], width: int = 100, **options: Any) -> str:
        """The terminal report as plain text, as ``stream-doctor replay`` prints it."""
        return _render_terminal(self.replay(path, **options), width)


@pytest.fixture
def stream_doctor(request: pytest.FixtureRequest) -> StreamDoctor:
    """Replay captures in a test: ``.replay``, ``.assert_clean``, ``.json_report``, ``.terminal_report``."""
    return StreamDoctor(request.config.rootpath)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "stream_doctor_serve(*captures): the captures the stream_doctor_server fixture serves"
    )


@pytest.fixture
def stream_doctor_server(request: pytest.FixtureRequest) -> Iterator[Callable[..., RunningServer] | RunningServer]:
    """Captures served on a free loopback port to the test's own code (``stream-doctor serve``).

    With ``@pytest.mark.stream_doctor_serve("capture", ...)`` it is the running server: ``.url`` is its
    base URL, and ``.stop()`` (``.report()``, ``.worst()``) ends it and gives the verdicts. Without the
    marker it is a factory: ``stream_doctor_server("capture", ...)`` starts one. Relative capture
    paths are relative to the rootdir. Every server it started is stopped after the test, and its
    verdicts printed (pytest shows them with a failure, or with ``-rA``).
    """
    try:
        from stream_doctor.serve.running import RunningServer
    except ImportError as error:
        from stream_doctor.util.install import install_extra

        pytest.fail(
            f"stream_doctor_server needs the record extra ({error.name}): {install_extra('record')}", pytrace=False
        )
    paths = StreamDoctor(request.config.rootpath)
    started: list[RunningServer] = []
    folders = request.getfixturevalue("tmp_path_factory")

    def start(*captures: str | os.PathLike[str], **options: Any) -> RunningServer:
        options.setdefault("out", str(folders.mktemp("stream-doctor-serve")))  # pytest's, cleaned as its are
        server = RunningServer(*(paths.path(capture) for capture in captures), **options)
        started.append(server)
        return server

    marker = request.node.get_closest_marker("stream_doctor_serve")
    try:
        yield start(*marker.args, **marker.kwargs) if marker is not None else start
    finally:
        for server in started:
            print(server.report(), end="")  # the verdicts, in the test's captured output


def _configured_expectations(capture: str, config: Any) -> tuple[Any, ...]:
    if config is False:
        return ()
    from stream_doctor.config import file as config_file

    found = config_file.nearest(capture) if config is True else os.fspath(config)
    return config_file.load(found).expectations_for(capture)


def _render_terminal(report: Report, width: int = 100) -> str:
    from stream_doctor.engine.redaction import redacted
    from stream_doctor.reporters import RenderOptions, terminal

    return terminal.render(redacted(report), RenderOptions(width=width))  # test logs are output too
