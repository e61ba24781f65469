"""The library runs behind ``--client`` in the live diagnosis (``record.live``): one turn's verdict, run on
a thread of its own so that the live thread never waits for a library's process."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.engine.stages import diagnose_clients
from stream_doctor.values.options import Options

if TYPE_CHECKING:
    from stream_doctor.clients.base import ClientError, Handoff, Profile
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.clients.pool import LibraryPool
    from stream_doctor.clients.runs import LibraryRuns
    from stream_doctor.record.live import LiveConversation

#: The turns whose library runs go on at once (each feeds its turn to a process per library), and those that may wait
#: for them; past that, a turn gets the models' verdict at once, with why.
VERDICTS_RUNNING = 2
VERDICTS_WAITING = 32
_RUNNING = threading.BoundedSemaphore(VERDICTS_RUNNING)


class LibraryVerdict:
    """One turn's client reviews by the installed libraries, run over the envelope once the exchange is
    written, on a thread of its own (each library in its own process, kept for the next turns, bounded as
    replay's runs are: ``clients/runs.py``; ``VERDICTS_RUNNING`` turns at once); the live thread never waits for it. It
    settles once: with the runs' reviews (the model where a library could not run), or the models' at
    stop (``give_up``)."""

    def __init__(
        self,
        conversation: LiveConversation,
        stream: AccumulatedStream,
        turn: int,
        results: list[tuple[Profile, tuple[Handoff, ...], ClientError | None]],
    ) -> None:
        self.conversation, self.stream, self.turn, self.results = conversation, stream, turn, results
        self.runs: LibraryRuns | None = None
        self.done = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._wait, name="stream-doctor library run", daemon=True)

    def _wait(self) -> None:
        from stream_doctor.clients.runs import RunRequired

        with _RUNNING:
            try:
                reviewed = self._reviewed()
            except RunRequired as error:  # the proxy goes on: said once, and the models answer
                self.conversation.live.required(str(error))
                reviewed = models_of(self.stream, self.results, str(error))
            except Exception as error:  # noqa: BLE001 - a run that fails here leaves the models' verdict, never a lost turn
                reviewed = models_of(self.stream, self.results, f"the library could not be run ({error!r})")
            finally:
                if self.runs is not None:
                    self.runs.close()
        self._settle(reviewed)

    def _reviewed(self) -> tuple[ClientReview, ...]:
        """The runs' reviews of the turn (the libraries started now, unless the stop gave the models')."""
        from stream_doctor.clients.runs import LibraryRuns

        conversation, options = self.conversation, self.conversation.options
        with self.lock:
            if self.done:
                return ()
            path, profiles = conversation.path, tuple(profile for profile, _, _ in self.results)
            self.runs = LibraryRuns(
                {path: path},
                "envelope",
                self.stream.capture.provider,
                profiles,
                options.client_mode,
                options.node_modules,
                self.turn,
                conversation.live.processes,
            )
        return tuple(self.runs.review(self.stream, self.turn, *result) for result in self.results)

    def give_up(self) -> None:
        """The stop came first: the models' verdict, and the library processes stopped."""
        late = "the library's run had not answered by the stop; this is the model's answer"
        if self._settle(models_of(self.stream, self.results, late)) and self.runs is not None:
            for process, _ in list(self.runs.started.values()):
                process.kill()  # its thread's wait returns, and finds the verdict given

    def _settle(self, reviewed: tuple[ClientReview, ...]) -> bool:
        live = self.conversation.live
        with self.lock:
            if self.done:
                return False
            self.done = True
        with live.emitting:
            live.verdicts.remove(self)
        self.conversation.settled(diagnose_clients(reviewed, (), self.conversation.options))
        return True


def models_of(
    stream: AccumulatedStream,
    results: list[tuple[Profile, tuple[Handoff, ...], ClientError | None]],
    note: str | None = None,
) -> tuple[ClientReview, ...]:
    """The profiles' reviews of a turn, each a model's (``note``: why the model stands for a library)."""
    from stream_doctor.clients.base import modelled
    from stream_doctor.clients.compare import review

    return tuple(
        review(stream, profile, handoffs, error, modelled(profile, note)) for profile, handoffs, error in results
    )


def library_processes(runs: bool) -> LibraryPool | None:
    """The library processes the proxy keeps for every turn's verdict, each started once (when ``runs``)."""
    if not runs:
        return None
    from stream_doctor.clients.pool import LibraryPool
    from stream_doctor.clients.runs import RUNNING

    return LibraryPool(RUNNING)


def runs_libraries(options: Options, profiles: tuple[Profile, ...]) -> bool:
    """Whether ``--client`` names a library the live proxy runs after each exchange (``--client-mode``)."""
    if options.client_mode == "model":
        return False
    from stream_doctor.clients.runs import compared

    return any(compared(profile.name) is not None for profile in profiles)
