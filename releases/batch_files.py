"""What each batch of the pass's documents makes beside the NDJSON export: its leaderboards'
CSVs and its Every Eval Ever lines, staged by a writer of their own while the pass goes on.

A large almanac's are made on the machine's second core, by a process of its own (`python -c
CHILD`): the pass is bound by the interpreter's lock, and these were some two fifths of its
work. The process is handed the rules once (the tracked models, the rows' limit), then each
batch's documents (with their last read only: the rest of their history is the NDJSON's) as
orjson's bytes, a frame at a time on its stdin; it answers each batch, in order, on its stdout.
Its bytes are the pass's own: the same function makes them (`made_files`), and the release's
id, which hashes every file, is the same either way (tests/releases/test_batch_files.py). A
small almanac's are made in the pass: starting an interpreter costs more than they do.
"""

import asyncio
import contextlib
import pickle
import signal
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

import orjson

from interchange import eee_benchmark_bytes
from releases.leaderboards import board_csv, board_lines
from releases.manifest import ReleaseFile
from resolvers import TrackedModels
from store import BenchmarkDoc, ReleaseStaging

CSV = "text/csv"
QUEUED_BATCHES = 8
"""Batches handed on and not yet written (some 1.5 MB each: their documents on the way, and
their files): the pass waits beyond (at 32, a release of 10,000 grew 128 MB, not 87)."""
PROCESS_FROM = 1000
"""An almanac of this many benchmarks has its batches' files made by a process of their own (a
release of 1,000 takes some seconds; the process, half a second to start and some 50 MB)."""
CHILD = "from releases.batch_files import serve; serve()"
FRAME_HEAD = struct.Struct("<Q")
"""Each frame's length, before its bytes."""

MadeBoard = tuple[str, int, bytes]
"""A leaderboard's file: its name in the release, its rows, its CSV."""


@dataclass(frozen=True)
class BatchFiles:
    """What a batch of benchmarks makes beside its NDJSON lines."""

    boards: list[MadeBoard]
    records: bytes
    """Its Every Eval Ever lines."""


MakeFiles = Callable[[list[BenchmarkDoc]], Awaitable[BatchFiles]]
"""What makes a batch's files (in the pass, or by the process)."""


@dataclass(frozen=True)
class BoardRules:
    """What makes a release's leaderboards from their documents, read once a release: the
    tracked models (by each key they answer to) and the rows a leaderboard lists (every row the
    `LEADERBOARD` query can ask for). Plain data, handed to the process as it is."""

    tracked: TrackedModels
    first: int


ReadLeaderboards = Callable[[], Awaitable[BoardRules]]
"""What reads a release's `BoardRules` (the layer above knows the tracked models, and the rows'
limit)."""


def made_files(rules: BoardRules, docs: list[BenchmarkDoc]) -> BatchFiles:
    """A batch's leaderboards, by the page's rules, and its records."""
    boards = []
    for doc in docs:
        lines = board_lines(doc, rules.tracked, rules.first)
        boards.append((f"benchmarks/{doc['slug']}.csv", len(lines), board_csv(lines)))
    return BatchFiles(boards, b"".join([line for doc in docs for line in eee_benchmark_bytes(doc)]))


class BatchWriter:
    """The batches' files, made a batch at a time (in the pass or by the process), and written
    in the pass's order while the pass goes on (a few batches queued: the pass waits beyond):
    each batch's leaderboards staged in one step, listed; its records handed to `records`."""

    def __init__(self, make: MakeFiles, records: Callable[[list[bytes]], Awaitable[None]]) -> None:
        self.make, self.records = make, records
        self.boards: list[ReleaseFile] = []
        self.rows: dict[str, int] = {}
        self.queue: asyncio.Queue[Awaitable[BatchFiles] | None] = asyncio.Queue(QUEUED_BATCHES)

    async def add(self, docs: list[BenchmarkDoc]) -> None:
        """A batch, to be made into files (the pass goes on while the process makes them)."""
        await self.queue.put(self.make(docs))

    async def close(self) -> None:
        await self.queue.put(None)

    async def written(self, staging: ReleaseStaging) -> None:
        while (making := await self.queue.get()) is not None:
            made = await making
            await self.records([made.records])
            staged = await staging.put_files([(name, data) for name, _, data in made.boards])
            for (name, rows, _), written in zip(made.boards, staged, strict=True):
                self.rows[name] = rows
                self.boards.append(ReleaseFile(name, written.size, written.sha256, CSV))


@contextlib.asynccontextmanager
async def files_maker(rules: BoardRules, by_process: bool) -> AsyncIterator[MakeFiles]:
    """What makes a batch's files: in the pass, or (`by_process`) by a process of their own,
    ended on leaving (killed, if leaving on an error)."""
    if not by_process:
        loop = asyncio.get_running_loop()

        def in_the_pass(docs: list[BenchmarkDoc]) -> Awaitable[BatchFiles]:
            made = loop.create_future()  # made now: the batch's documents are not kept
            made.set_result(made_files(rules, docs))
            return made

        yield in_the_pass
        return
    process = FilesProcess(rules)
    try:
        yield process.make
    except BaseException:
        await process.kill()
        raise
    await process.end()


class FilesProcess:
    """The process that makes a large release's batches' files. Frames go to it and come back
    each on a thread of its own (a pipe's reads and writes release the interpreter's lock), in
    order: the n-th answer read is the n-th batch's."""

    def __init__(self, rules: BoardRules) -> None:
        self.child = subprocess.Popen(
            [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.child.stdin is not None  # both piped
        assert self.child.stdout is not None
        self.to_child, self.from_child = self.child.stdin, self.child.stdout
        self.sending = ThreadPoolExecutor(1, "release-files-out")
        self.receiving = ThreadPoolExecutor(1, "release-files-in")
        self.loop = asyncio.get_running_loop()
        self.answers: set[asyncio.Future[BatchFiles]] = set()
        """The answers not yet in (cancelled if the process is killed: nobody awaits them)."""
        self.loop.run_in_executor(self.sending, _send, self.to_child, pickle.dumps(rules))

    def make(self, docs: list[BenchmarkDoc]) -> Awaitable[BatchFiles]:
        """The batch's files, once the process has made them."""
        frame = orjson.dumps([_current(doc) for doc in docs])
        self.loop.run_in_executor(self.sending, _send, self.to_child, frame)
        answer = self.loop.run_in_executor(self.receiving, self._answer)
        self.answers.add(answer)
        answer.add_done_callback(self.answers.discard)
        return answer

    def _answer(self) -> BatchFiles:
        frame = _received(self.from_child)
        if frame is None:
            raise RuntimeError(
                f"The process making the release's files ended early (exit code "
                f"{self.child.wait()}): its error is in the log."
            )
        made: BatchFiles = pickle.loads(frame)
        return made

    async def end(self) -> None:
        """Every batch answered: the process is told there are no more, and waited for."""
        await self.loop.run_in_executor(self.sending, _close, self.to_child)
        await asyncio.to_thread(self.child.wait)
        self._let_go()

    async def kill(self) -> None:
        """The release failed: the process is ended, and what it was to answer let go."""
        for answer in list(self.answers):
            answer.cancel()
        self.child.kill()
        await asyncio.to_thread(self.child.wait)
        await self.loop.run_in_executor(self.sending, _close, self.to_child)  # after the writes
        self._let_go()

    def _let_go(self) -> None:
        self.sending.shutdown(wait=False)
        self.receiving.shutdown(wait=False, cancel_futures=True)  # each read ends at the EOF
        self.from_child.close()


def _current(doc: BenchmarkDoc) -> dict[str, Any]:
    """The document with its last read only (its history is most of its bytes): a leaderboard
    is its current rows, and its records' date that of its last read."""
    current = {key: value for key, value in doc.items() if key != "history"}
    if "history" in doc:
        current["history"] = doc["history"][-1:]
    return current


def _send(to: IO[bytes], frame: bytes) -> None:
    # A process that ended cannot be written to: the reader of its answer says why.
    with contextlib.suppress(BrokenPipeError):
        to.write(FRAME_HEAD.pack(len(frame)))
        to.write(frame)
        to.flush()


def _close(to: IO[bytes]) -> None:
    with contextlib.suppress(BrokenPipeError):
        to.close()


def _received(source: IO[bytes]) -> bytes | None:
    """The next frame; None at the end of the stream (or of a frame cut short)."""
    head = source.read(FRAME_HEAD.size)
    if len(head) < FRAME_HEAD.size:
        return None
    (size,) = FRAME_HEAD.unpack(head)
    frame = source.read(size)
    return frame if len(frame) == size else None


def serve() -> None:
    """The process's side (`CHILD`): the rules, then each batch's files made as it comes, until
    its stdin ends. An interrupt is the parent's to handle: the parent ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    rules = _rules(_received(source))
    while (frame := _received(source)) is not None:
        docs: list[Any] = orjson.loads(frame)
        answer = pickle.dumps(made_files(rules, docs), protocol=pickle.HIGHEST_PROTOCOL)
        sink.write(FRAME_HEAD.pack(len(answer)))
        sink.write(answer)
        sink.flush()


def _rules(frame: bytes | None) -> BoardRules:
    if frame is None:
        raise SystemExit(0)  # the parent ended before the first batch
    rules: BoardRules = pickle.loads(frame)
    return rules
