"""Run a function on several ranks at once, each a fresh process in one process group, and collect the results.

For tests and the notebook, where torchrun (a command) is not at hand. It is PyTorch's own launcher,
torch.multiprocessing.start_processes, plus what a test needs:

    results = run_ranks(fn, world_size=2, backend="gloo", args=(n,))   # [fn(0, 2, n), fn(1, 2, n)]

- the ranks meet through a file (a FileStore in a fresh temp folder), so no port is chosen and none is left taken;
- the process group has a timeout, so a collective that a rank never joins raises an error instead of hanging;
- a rank that raises ends the run: start_processes stops the other ranks, and RanksFailed carries the error of
  every rank that failed (one rank's failure often makes others fail too: the first error is the cause);
- a rank that dies without raising (a signal: a C++ abort, a crash) is named too, with the end of its stderr. Each
  rank's stderr goes to a file in the run's folder, copied to ours when the ranks have ended;
- a deadline for the whole run: past it, every rank still running is killed and TimeoutError is raised.
No rank outlives run_ranks, whatever happened. A world of one rank needs no other process: it runs in this one,
in a group of its own that is destroyed afterwards (the same code path, minus the spawning).

Destroying a group must free it, or its Gloo threads outlive it, and a rank can die at exit (below, at the imports).

Every process of the chapter joins its group through init_group (run_ranks' ranks, torchrun's in demo.py and
bench.py), and asks rank_device() where its tensors go.
"""

from __future__ import annotations

import datetime
import gc
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

# Imported before any group exists, on purpose. Its functions take `group=group.WORLD` as a default, and a default is
# read once, at import. DDP imports it (through torch._dynamo) when the first DDP model is made: imported then, it
# would hold the group for good. destroy_process_group could not free the group, so its Gloo threads would run on.
# At exit, such a thread may still be freeing a finished all_reduce of the last backward (it holds a Python object,
# so the thread needs the GIL); Python ends it mid-way, and C++ aborts the rank ("terminate called without an active
# exception", SIGABRT). Imported now, the default is None, and destroy_process_group frees the group and its threads.
import torch.distributed.nn  # noqa: F401
import torch.multiprocessing as mp
from torch.multiprocessing.spawn import ProcessException


class RanksTimedOut(TimeoutError):
    pass


class RanksFailed(RuntimeError):
    """One or more ranks raised; the message holds each failed rank's error, in the order they happened."""


@dataclass
class RankError:
    """What a rank raised, returned in place of its result by run_ranks(..., catch=True)."""

    error: str

    def __str__(self) -> str:
        return self.error


def _call(fn, rank, world_size, args, catch: bool):
    if not catch:
        return fn(rank, world_size, *args)
    try:
        return fn(rank, world_size, *args)
    except Exception as error:  # noqa: BLE001 - the caller asked for every rank's outcome, errors included
        return RankError("".join(traceback.format_exception_only(error)).strip())


def _rank_main(rank, fn, world_size, backend, folder, timeout_s, env, catch, args):
    _stderr_to_file(Path(folder) / f"stderr-{rank}.txt")
    os.environ.update(env)
    dist.set_debug_level_from_env()  # torch read TORCH_DISTRIBUTED_DEBUG when it was imported, before env was set
    _init_group(rank, world_size, backend, folder, timeout_s)
    try:
        result = _call(fn, rank, world_size, args, catch)
        torch.save(result, Path(folder) / f"result-{rank}.pt")
    except BaseException as error:
        # written before the process ends, so the parent can report it even if another rank is noticed first
        summary = "".join(traceback.format_exception_only(error)).strip()
        trace = "".join(traceback.format_exception(error)).strip()
        (Path(folder) / f"error-{rank}.txt").write_text(f"{time.time():.6f}\n{summary}\n\n{trace}")
        raise
    finally:
        _destroy_group()


def _stderr_to_file(path: Path) -> None:
    """Send this process's stderr (file descriptor 2, where Python and C++ both write) to `path`. A rank that dies
    by a signal raises nothing: what it wrote there is all that says why."""
    sys.stderr.flush()
    file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(file, 2)
    os.close(file)


def _destroy_group() -> None:
    """Free what fn left in reference cycles first (a DDP model holds the group), so that destroy_process_group
    drops the group's last reference: the group is freed and its threads end now, not during Python's exit."""
    gc.collect()
    dist.destroy_process_group()


def init_group(backend: str, local_rank: int, timeout_s: float, **where) -> torch.device:
    """Join a process group of `backend` whose collectives give up after timeout_s, so that a rank that never joins
    one makes the others fail instead of hang. Under NCCL this process first takes GPU local_rank as its current
    device (NCCL binds its communicator to it, and the kernels must run there too). `where`: init_process_group's
    rendezvous arguments (none under torchrun, which sets them in the environment). Returns rank_device()."""
    device_id = None
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        device_id = torch.device("cuda", local_rank)
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s), device_id=device_id, **where)
    return rank_device()


def rank_device() -> torch.device:
    """Where this rank's tensors go: its current GPU in an NCCL group, else the CPU."""
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _init_group(rank, world_size, backend, folder, timeout_s):
    init_group(backend, rank, timeout_s, init_method=f"file://{folder}/store", rank=rank, world_size=world_size)


def run_ranks(
    fn: Callable,
    world_size: int = 2,
    backend: str = "gloo",
    *,
    args: tuple = (),
    collective_timeout_s: float = 30.0,
    deadline_s: float = 120.0,
    env: dict[str, str] | None = None,
    catch: bool = False,
) -> list:
    """fn(rank, world_size, *args) on world_size new processes inside one process group of `backend`; returns the
    list of their return values (anything torch.save can write). fn must be importable by name (a module-level
    function), since each rank is a fresh Python process. Raises RanksFailed with every failed rank's error if
    one raises, RanksTimedOut past `deadline_s`. With catch=True a rank's exception is returned in place of its
    result (a RankError), so that the caller sees what each rank saw: one rank's error next to another's answer."""
    if backend == "nccl" and torch.cuda.device_count() < world_size:
        raise RuntimeError(f"NCCL with {world_size} ranks needs {world_size} GPUs, {torch.cuda.device_count()} visible")
    if world_size == 1 and not env and not dist.is_initialized():
        with tempfile.TemporaryDirectory(prefix="multigpu-ranks-") as folder:
            _init_group(0, 1, backend, folder, collective_timeout_s)
            try:
                return [_call(fn, 0, 1, args, catch)]
            finally:
                _destroy_group()
    with tempfile.TemporaryDirectory(prefix="multigpu-ranks-") as folder:
        context = mp.start_processes(
            _rank_main,
            args=(fn, world_size, backend, folder, collective_timeout_s, env or {}, catch, args),
            nprocs=world_size,
            join=False,
            start_method="spawn",
        )
        deadline = time.monotonic() + deadline_s
        try:
            while not context.join(timeout=0.2):  # True once all ended; raises as soon as one rank failed
                if time.monotonic() > deadline:
                    raise RanksTimedOut(f"the {world_size} ranks did not finish within {deadline_s:g} s")
        except ProcessException as failure:
            raise RanksFailed(_errors_of_ranks(folder, failure)) from failure
        finally:
            for process in context.processes:  # after an error or the deadline: none is left running
                if process.is_alive():
                    process.kill()
                process.join()
            _copy_stderr_of_ranks(folder, world_size)
        return [torch.load(Path(folder) / f"result-{rank}.pt", weights_only=False) for rank in range(world_size)]


def _errors_of_ranks(folder: str, failure: ProcessException) -> str:
    """Each failed rank's error on a line, earliest first, then their tracebacks. The rank that start_processes saw
    fail may have written no error (killed by a signal: a C++ abort, a crash): then what start_processes says, and
    the end of that rank's stderr."""
    errors = []
    for path in Path(folder).glob("error-*.txt"):
        when, summary, trace = path.read_text().split("\n", 2)
        errors.append((float(when), path.stem.removeprefix("error-"), summary, trace))
    if not (Path(folder) / f"error-{failure.error_index}.txt").exists():
        stderr = Path(folder) / f"stderr-{failure.error_index}.txt"
        when = stderr.stat().st_mtime if stderr.exists() else time.time()  # its last words, or now
        said = str(failure).strip()  # one line for a signal, a traceback for an exception raised before the try
        summary = said.splitlines()[-1]
        trace = (f"{said}\n\n" if "\n" in said else "") + f"the end of its stderr:\n{_tail(stderr, STDERR_LINES)}"
        errors.append((when, str(failure.error_index), summary, trace))
    errors.sort()
    lines = [f"rank {rank} failed: {summary}" for _, rank, summary, _ in errors]
    traces = [f"--- rank {rank} ---\n{trace.strip()}" for _, rank, _, trace in errors]
    return "\n".join(lines + [""] + traces)


STDERR_LINES = 20  # how much of a dead rank's stderr RanksFailed shows


def _tail(path: Path, lines: int) -> str:
    if not path.exists():
        return "(none)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) or "(empty)"


def _copy_stderr_of_ranks(folder: str, world_size: int) -> None:
    """What the ranks wrote to stderr, to ours (file descriptor 2, where it went before it was sent to files)."""
    sys.stderr.flush()
    for rank in range(world_size):
        path = Path(folder) / f"stderr-{rank}.txt"
        if path.exists() and path.stat().st_size:
            with open(2, "wb", closefd=False) as ours:
                ours.write(path.read_bytes())
