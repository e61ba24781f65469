"""Coverage-guided fuzzing of every reader and adapter with atheris (optional: ``pip install -e ".[fuzz]"``).

    python tests/fuzz_atheris.py -atheris_runs=1000000 [-max_total_time=600] [corpus_dir seed_dir ...]

Seeds are the project's fixtures; each input is replayed (detection, then each provider forced)
and converted. libFuzzer writes the inputs that find new coverage into the first corpus directory,
so without directories the run keeps them in ``.fuzz-corpus/`` (git-ignored) and only reads
``fixtures/`` and ``tests/fuzz_corpus/`` (inputs that once crashed: save a new crash there); crashes are written to the working directory as ``crash-<sha1>`` (``-artifact_prefix=``). Anything but a report or a one-line RunError is a crash atheris reports with the
input that caused it. Not collected by pytest (tests/test_fuzz.py is the bounded CI version).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    try:
        import atheris
    except ImportError:
        sys.exit('atheris is not installed: pip install -e ".[fuzz]" (CPython wheels on Linux and macOS)')
    sys.path.insert(0, str(ROOT))
    with atheris.instrument_imports():
        from stream_doctor.engine.convert import convert
        from stream_doctor.engine.pipeline import replay
        from stream_doctor.engine.stages import RunError
        from stream_doctor.providers import ADAPTERS
        from stream_doctor.values.options import Options

    import gc

    providers = [None, *ADAPTERS]
    runs = 0

    def one_input(data: bytes) -> None:
        nonlocal runs
        runs += 1
        if runs % 1000 == 0:
            # The engine pauses the collector during each replay and then moves what it allocated
            # straight to the oldest generation (util/gcpause.py), so the cycles a failed replay leaves
            # (an exception and its frames) wait for a full collection that a loop of replays never
            # triggers: without this, RSS grows ~3 KB per input and a million inputs pass libFuzzer's
            # 2 GB -rss_limit_mb.
            gc.collect()
        provided = atheris.FuzzedDataProvider(data)
        provider = providers[provided.ConsumeIntInRange(0, len(providers) - 1)]
        capture = provided.ConsumeBytes(provided.remaining_bytes())
        options = Options(provider=provider, max_bytes=1 << 24, max_frames=100_000)
        for run in (replay, convert):
            try:
                run("fuzz.capture", options, capture)
            except RunError:
                pass

    args = list(sys.argv)
    if not any(not arg.startswith("-") for arg in args[1:]):
        # Never the fixtures first: libFuzzer adds every new input to the first corpus directory.
        found = ROOT / ".fuzz-corpus"
        found.mkdir(exist_ok=True)
        args += [str(found), str(ROOT / "fixtures"), str(ROOT / "tests" / "fuzz_corpus")]
    atheris.Setup(args, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
