"""Where a soak's chunks run: worker processes on this machine, or a Dask cluster.

A chunk is a plain function call on a picklable task, so the same campaign runs on one core, on
every core of a machine, or on an existing Dask distributed cluster (`pip install
'nanopto[dask]'`), with results arriving in the order they finish
(docs/property-testing.md#soaking-a-pipeline).

Local workers are separate processes (egglog and the interpreter hold the GIL), started with
`spawn` so they share nothing with the parent, and *recycled*: each worker exits after
`tasks_per_worker` chunks and a fresh one takes its place, so what a long run leaks inside egglog
or hypothesis is returned to the system and a campaign's memory stays bounded however long it runs.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import itertools
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs `fn` on every task; yields the results as they finish."""

    workers: int
    where: str

    def run(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]: ...

    def close(self) -> None: ...


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class InThisProcess:
    """Every task in this process, one after the other: for a debugger, a profiler, or a test."""

    workers = 1
    where = "this process"

    def run(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        for task in tasks:
            yield fn(task)

    def close(self) -> None:
        pass


MEMORY_TEMP = "/dev/shm"
"""A memory-backed directory (Linux's tmpfs) for a local worker's temporary files."""


def _use_memory_for_temporary_files() -> None:
    """A worker's start: its temporary files go to memory when the machine has a tmpfs. Each
    e-graph run writes its term rows to files that egglog reads back; on a disk shared with other
    jobs that I/O costs a quarter of a program's CPU time (bench/aliasing_soak.py prints it)."""
    if os.path.isdir(MEMORY_TEMP) and os.access(MEMORY_TEMP, os.W_OK | os.X_OK) and "TMPDIR" not in os.environ:
        tempfile.tempdir = MEMORY_TEMP


class LocalProcesses:
    """`workers` spawned processes, replaced by fresh ones after `tasks_per_worker` tasks each.

    The recycling is done here, one pool per `workers * tasks_per_worker` tasks, not with
    `ProcessPoolExecutor(max_tasks_per_child=...)`: on Python 3.11 that pool stops handing out work
    once a worker has been replaced twice (one worker and 2 tasks each: the 5th task never runs)."""

    def __init__(self, workers: int | None = None, tasks_per_worker: int = 20) -> None:
        self.workers = workers or default_workers()
        self.tasks_per_worker = tasks_per_worker
        self.where = f"{self.workers} local worker process{'es' if self.workers != 1 else ''}"
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    def run(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        queue = iter(tasks)
        while batch := list(itertools.islice(queue, self.workers * self.tasks_per_worker)):
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_use_memory_for_temporary_files,
            )
            try:
                yield from self._run_batch(self._pool, fn, batch)
            finally:
                self.close()

    def _run_batch(self, pool: concurrent.futures.ProcessPoolExecutor, fn: Callable[[T], R], batch: list[T]) -> Iterator[R]:
        queue = iter(batch)
        window = 4 * self.workers  # tasks in flight: enough to keep every worker busy
        pending = {pool.submit(fn, task) for task in itertools.islice(queue, window)}
        while pending:
            done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                for task in queue:
                    pending.add(pool.submit(fn, task))
                    break
                yield future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskCluster:
    """The workers of a running Dask distributed scheduler at `address` (`tcp://host:8786`), or of
    a `distributed.Client` made by the caller (a `LocalCluster`'s, in the tests)."""

    def __init__(self, address: str | None = None, client: Any = None) -> None:
        try:
            distributed: Any = importlib.import_module("distributed")  # untyped: an optional extra
        except ImportError:
            raise ImportError(
                "--scheduler needs Dask distributed: pip install 'nanopto[dask]'"
            ) from None
        self._own = client is None
        self._client = client if client is not None else distributed.Client(address, timeout="30s")
        self._as_completed = distributed.as_completed
        self.workers = max(1, sum(self._client.nthreads().values()))
        self.where = f"the Dask cluster at {self._client.scheduler_info().get('address', address)} ({self.workers} worker threads)"

    def run(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        queue = iter(tasks)
        window = 4 * self.workers
        futures = [self._client.submit(fn, task, pure=False) for task in itertools.islice(queue, window)]
        pending = self._as_completed(futures)
        for future in pending:
            for task in queue:
                pending.add(self._client.submit(fn, task, pure=False))
                break
            result: R = future.result()
            future.release()
            yield result

    def close(self) -> None:
        if self._own:
            self._client.close()
