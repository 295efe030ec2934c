"""Chapter 09's benchmark: the ladder rung by rung, then softmax, LayerNorm and RMSNorm, forward and
forward+backward, against every peer.

    python bench.py --out DIR                 (make bench: the ladder, every shape, bf16 and fp32, goals at the end)
    python bench.py --out DIR --quick         (two small shapes, no torch.compile: a smoke test)
    python bench.py --out DIR --shapes 16384x4096 --dtypes bf16 --ops softmax
    python bench.py --out DIR --resume        (go on with the measurements a cut-short run saved in DIR)

Bytes counted (the floor an op cannot go below): forward 2MN elements (read x, write y); forward+backward 5MN
(forward, then read x or y and dy, write dx). A device copy of MN elements (2MN moved) is measured in the same run:
"% of copy" is the op's bandwidth over the copy's.

Peers, run the way their users run them: eager PyTorch; torch.compile of the same function, compiled for each shape
and warmed up (for forward+backward the compiled function is the forward whose backward is timed); the chapter's
Triton kernels (rowwise/triton_kernels.py, the tutorials' way); Liger-Kernel and QuACK through their public APIs when
they are installed (a printed note otherwise). Every implementation's output is checked against float32 eager first.
Times: CUDA events, ROUNDS interleaved rounds (course.timing.interleaved_timings); min / median / max over rounds.
Each round's repeats are queued behind GPU work that outlasts the host's time to issue them (host_ahead), so the
events time the GPU's work alone, as in a training step whose host runs ahead: an autograd step costs this host about
as long as the kernels of a 16384 x 4096 bf16 forward+backward, and timed one call after another, the GPU would wait
for it. The host's own time per call is reported beside (host_us): where it is over the GPU's, a call made alone,
with nothing queued before it, waits for the host.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from course.compiled import compile_per_shape
from course.report import Goals, Table, copy_results, environment_line
from course.timing import bandwidth_gbs, interleaved_timings

SHAPES = [(16384, 4096), (4096, 32768), (65536, 1024), (16384, 4097)]
LONG_SHAPE = (512, 1 << 18)  # rows too long for one block: the goal is forward only
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
OPS = ("softmax", "layer_norm", "rms_norm")
ROUNDS = 5
EPS = 1e-5


# ---- the implementations -----------------------------------------------------------------------------------------
def eager(op):
    if op == "softmax":
        return lambda x, w, b: torch.softmax(x, -1)
    if op == "layer_norm":
        return lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b, EPS)
    return lambda x, w, b: F.rms_norm(x, x.shape[-1:], w, EPS)


def ours(op, rung=-1):
    import rowwise

    if op == "softmax":
        return lambda x, w, b: rowwise.softmax(x, rung=rung)
    if op == "layer_norm":
        return lambda x, w, b: rowwise.layer_norm(x, w, b, EPS, rung=rung)
    return lambda x, w, b: rowwise.rms_norm(x, w, EPS, rung=rung)


class _TritonFunction(torch.autograd.Function):
    """Bench glue only: the Triton kernels with their backward, so forward+backward is timed like the others'."""

    @staticmethod
    def forward(ctx, op, x, w, b):
        from rowwise import triton_kernels as tk

        ctx.op = op
        if op == "softmax":
            y = tk.softmax(x)
            ctx.save_for_backward(y)
        elif op == "layer_norm":
            y, mean, rstd = tk.layer_norm(x, w, b, EPS)
            ctx.save_for_backward(x, w, mean, rstd)
        else:
            y, rstd = tk.rms_norm(x, w, EPS)
            ctx.save_for_backward(x, w, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        from rowwise import triton_kernels as tk

        dy = dy.contiguous()
        if ctx.op == "softmax":
            (y,) = ctx.saved_tensors
            return None, tk.softmax_backward(y, dy), None, None
        if ctx.op == "layer_norm":
            x, w, mean, rstd = ctx.saved_tensors
            dx, dw, db = tk.layer_norm_backward(dy, x, w, mean, rstd)
            return None, dx, dw, db
        x, w, rstd = ctx.saved_tensors
        dx, dw = tk.rms_norm_backward(dy, x, w, rstd)
        return None, dx, dw, None


def triton_impl(op):
    return lambda x, w, b: _TritonFunction.apply(op, x, w, b)


def liger(op):
    """Liger-Kernel's public autograd functions, or None with the reason."""
    try:
        if op == "softmax":
            from liger_kernel.transformers.functional import liger_softmax

            return lambda x, w, b: liger_softmax(x)
        if op == "layer_norm":
            from liger_kernel.transformers.functional import liger_layer_norm

            return lambda x, w, b: liger_layer_norm(x, w, b, EPS)
        from liger_kernel.transformers.functional import liger_rms_norm

        return lambda x, w, b: liger_rms_norm(x, w, EPS)
    except ImportError as error:
        return f"Liger-Kernel is not installed or lacks {op} ({error})"


def quack(op):
    """QuACK's public functions (quack.softmax, quack.rmsnorm, its layernorm where the version has one)."""
    try:
        import quack
    except ImportError as error:
        return f"QuACK is not installed ({error})"
    if op == "softmax":
        return lambda x, w, b: quack.softmax(x)
    if op == "rms_norm":
        return lambda x, w, b: quack.rmsnorm(x, w, eps=EPS)
    try:
        from quack.layernorm import layernorm
    except ImportError:
        return "this QuACK has no public layernorm with autograd (quack.layernorm.layernorm)"
    return lambda x, w, b: layernorm(x, w, b, eps=EPS) if b is not None else layernorm(x, w, eps=EPS)


def implementations(op, n, with_compile):
    """name -> fn(x, w, b) or a string saying why it is left out."""
    impls = {"ours": ours(op), "eager": eager(op)}
    if with_compile:
        impls["torch.compile"] = compile_per_shape(eager(op))
    from rowwise import triton_kernels

    impls["Triton"] = triton_impl(op) if n <= triton_kernels.MAX_FUSED else "the tutorials' kernels hold a row"
    impls["Liger"] = liger(op)
    impls["QuACK"] = quack(op)
    return impls


PEERS = ("eager", "torch.compile", "Triton", "Liger", "QuACK")


# ---- one measurement -----------------------------------------------------------------------------------------------
def make_inputs(op, shape, dtype):
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    w = (1 + 0.1 * torch.randn(n, device="cuda")).to(dtype) if op != "softmax" else None
    b = (0.1 * torch.randn(n, device="cuda")).to(dtype) if op == "layer_norm" else None
    dy = torch.randn(m, n, device="cuda", dtype=dtype)
    return x, w, b, dy


def timed_call(fn, x, w, b, dy, backward):
    if not backward:
        return lambda: fn(x, w, b)
    leaves = [t.detach().requires_grad_() for t in (x, w, b) if t is not None]
    xs = leaves[0]
    ws = leaves[1] if w is not None else None
    bs = leaves[2] if b is not None else None
    return lambda: torch.autograd.grad(fn(xs, ws, bs), leaves, dy)


def check(name, fn, x, w, b, dy, backward):
    """Correct before fast: the output (and gradients) against float32 eager."""
    reference = timed_call(
        lambda *a: eager_op(*a),
        x.float(),
        *(t.float() if t is not None else None for t in (w, b)),
        dy.float(),
        backward,
    )()
    got = timed_call(fn, x, w, b, dy, backward)()
    got, reference = (got, reference) if backward else ((got,), (reference,))
    tol = 0.05 if x.dtype == torch.bfloat16 else 2e-3
    for g, r in zip(got, reference):
        scale = r.abs().max().item() or 1.0
        error = ((g.float() - r).abs().max().item()) / scale
        if not error <= tol:
            raise AssertionError(f"{name}: error {error:.3g} (relative to the largest value) over {tol}")


eager_op = None  # set per op in measure()


def measure(op, shape, dtype, backward, with_compile, rounds, impls=None):
    global eager_op
    eager_op = eager(op)
    x, w, b, dy = make_inputs(op, shape, dtype)
    impls = impls if impls is not None else implementations(op, shape[1], with_compile)
    notes = {name: fn for name, fn in impls.items() if isinstance(fn, str)}
    calls = {}
    for name, fn in impls.items():
        if isinstance(fn, str):
            continue
        if name in PEERS[2:]:  # a library peer that rejects these inputs is reported, not hidden; ours must run
            try:
                check(name, fn, x, w, b, dy, backward)
            except Exception as error:  # noqa: BLE001 - any failure of a peer (QuACK's DSL compiler raises its own)
                notes[name] = f"could not run: {type(error).__name__}: {str(error).splitlines()[0][:200]}"
                continue
        else:
            check(name, fn, x, w, b, dy, backward)
        calls[name] = timed_call(fn, x, w, b, dy, backward)
    dst = torch.empty_like(x)
    calls = {"device copy": lambda: dst.copy_(x), **calls}
    timings = interleaved_timings(calls, rounds=rounds, warmup=3, repeat=10, host_ahead=True)
    times = {name: [t.median_ms for t in per_round] for name, per_round in timings.items()}
    host = {name: [t.host_ms for t in per_round] for name, per_round in timings.items()}
    return times, host, notes


# ---- the summary ---------------------------------------------------------------------------------------------------
SUMMARY_COLUMNS = ("ours", "eager", "torch.compile", "Triton", "Liger", "QuACK")


def summary(csv_path: Path) -> str:
    """One line per measurement (op, dtype, shape, pass): each implementation's bandwidth as % of the device copy in
    the same run, from the bench's CSV. The lesson's table is this file (results/<machine>/summary.md)."""
    import csv

    cases: dict[tuple, dict[str, float]] = {}
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["op"], row["dtype"], row["shape"], row["pass"])
            cases.setdefault(key, {})[row["impl"]] = float(row["% of copy"])
    head = "| op | dtype | shape | pass | " + " | ".join(SUMMARY_COLUMNS) + " |"
    lines = [head, "|" + "---|" * 4 + "---:|" * len(SUMMARY_COLUMNS)]
    for (op, dtype, shape, what), got in cases.items():
        best = max((v for k, v in got.items() if k in SUMMARY_COLUMNS[1:]), default=None)
        cells = []
        for name in SUMMARY_COLUMNS:
            value = got.get(name)
            text = "—" if value is None else f"{value:.0f}"
            cells.append(f"**{text}**" if value is not None and name != "ours" and value == best else text)
        lines.append(f"| {op} | {dtype} | {shape} | {what} | " + " | ".join(cells) + " |")
    note = (
        "% of the device copy's bandwidth in the same run (bytes: 2MN forward, 5MN forward+backward); the best "
        "peer in bold; — : not run (see the notes in the bench's log)."
    )
    return note + "\n\n" + "\n".join(lines) + "\n"


# ---- the ladder ----------------------------------------------------------------------------------------------------
LADDER_SHAPES = [(16384, 4096), LONG_SHAPE]


def ladder(store, saved, rounds, table) -> None:
    """The softmax forward in bf16, rung by rung, in % of the device copy: at 16384 x 4096 (rungs 3-5 run the same
    launch there: the row fits a block) and at rows of 2^18, where rung 3 cannot run and rungs 4 and 5 split the row."""
    import rowwise

    for shape in LADDER_SHAPES:
        key = f"ladder {shape[0]}x{shape[1]} rounds={rounds}"
        if key not in store:
            rungs = {f"rung {r}": ours("softmax", r) for r in sorted(rowwise.RUNGS)}
            probe = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
            for r in sorted(rowwise.RUNGS):
                try:
                    rowwise.describe(probe, "softmax", rung=r)
                except ValueError as error:  # rung 3 on a row longer than a block, rung 5 before sm_90
                    rungs[f"rung {r}"] = f"{error}"
            del probe
            times, _, notes = measure("softmax", shape, torch.bfloat16, False, False, rounds, rungs)
            store[key] = {"times": times, "notes": notes}
            saved.write_text(json.dumps(store, indent=1))
        times, notes = store[key]["times"], store[key]["notes"]
        copy = statistics.median(times["device copy"])
        for name in sorted(n for n in times if n != "device copy"):
            median = statistics.median(times[name])
            table.add(
                shape=f"{shape[0]}x{shape[1]}", rung=name, time_us=median * 1e3, **{"% of copy": 100 * copy / median}
            )
        for name, why in notes.items():
            print(f"      note: {name} left out of the ladder at {shape}: {why.splitlines()[0][:160]}")


# ---- the run -----------------------------------------------------------------------------------------------------
def worst_op(lines):
    """Of one shape and dtype's three ops, the one whose median is lowest: (op, per-round values)."""
    return min(lines.items(), key=lambda item: statistics.median(item[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    parser.add_argument("--copy-to", type=Path, help="also copy the tables, plot and goals here (results/<gpu>)")
    parser.add_argument("--quick", action="store_true", help="two small shapes, bf16, no torch.compile")
    parser.add_argument("--shapes", nargs="*", help="MxN shapes (default: the goal shapes)")
    parser.add_argument("--dtypes", nargs="*", choices=list(DTYPES), default=list(DTYPES))
    parser.add_argument("--ops", nargs="*", choices=OPS, default=list(OPS))
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the measurements already in OUT/rounds.json (a run cut short by a time limit goes on from there)",
    )
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench.py needs a CUDA GPU: none is visible here, so there is nothing to measure (exit 0).")
        return 0
    import rowwise

    args.out.mkdir(parents=True, exist_ok=True)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes] if args.shapes else [*SHAPES, LONG_SHAPE]
    if args.quick:
        shapes, args.dtypes, args.no_compile = [(2048, 1024), (512, 4097)], ["bf16"], True
    rounds = 3 if args.quick else ROUNDS
    print(f"{environment_line()}\nrounds: {rounds}; shapes: {shapes}")
    saved = args.out / "rounds.json"
    store = json.loads(saved.read_text()) if args.resume and saved.exists() else {}

    steps = Table("the ladder: softmax forward, bf16 (median of rounds)", ["shape", "rung", "time_us", "% of copy"])
    if not args.quick:
        ladder(store, saved, rounds, steps)
    columns = ["op", "dtype", "shape", "pass", "impl", "time_us", "min_us", "max_us", "host_us", "GB/s", "% of copy"]
    columns.append("vs ours")
    table = Table("fused row-wise ops (median of rounds)", columns)
    goals = Goals("Goals (the chapter's, the same on every GPU), from this run")
    of_copy: dict[tuple, dict[str, list[float]]] = {}  # (shape, dtype, pass) -> op -> ours / copy, per round
    over_peer: dict[str, dict[str, list[float]]] = {}  # pass -> "op dtype shape (peer)" -> best peer / ours, per round
    for dtype_name in args.dtypes:
        dtype = DTYPES[dtype_name]
        size = torch.empty((), dtype=dtype).element_size()
        for shape in shapes:
            m, n = shape
            whole = torch.empty(m, n, device="cuda", dtype=dtype)  # describe reads only the shape
            launches = {op: rowwise.describe(whole, op) for op in args.ops}
            del whole
            for op in args.ops:
                for backward in (False, True):
                    if backward and shape == LONG_SHAPE:
                        continue  # the long-row goal is the forward's
                    what = "fwd+bwd" if backward else "fwd"
                    key = f"{op} {dtype_name} {m}x{n} {what} rounds={rounds}" + (
                        " no-compile" if args.no_compile else ""
                    )
                    if key not in store:
                        times, host, notes = measure(op, shape, dtype, backward, not args.no_compile, rounds)
                        store[key] = {"times": times, "host": host, "notes": notes}
                        saved.write_text(json.dumps(store, indent=1))
                        print(f"measured {key}", flush=True)
                    times, host, notes = store[key]["times"], store[key]["host"], store[key]["notes"]
                    elements = (5 if backward else 2) * m * n * size
                    copy_bytes = 2 * m * n * size
                    copy = times["device copy"]
                    median = {k: statistics.median(v) for k, v in times.items()}
                    for name, per_round in times.items():
                        nbytes = copy_bytes if name == "device copy" else elements
                        gbs = bandwidth_gbs(nbytes, median[name])
                        table.add(
                            op=op,
                            dtype=dtype_name,
                            shape=f"{m}x{n}",
                            **{"pass": what},
                            impl=name,
                            time_us=median[name] * 1e3,
                            min_us=min(per_round) * 1e3,
                            max_us=max(per_round) * 1e3,
                            host_us=statistics.median(host[name]) * 1e3,
                            **{
                                "GB/s": gbs,
                                "% of copy": 100 * gbs / bandwidth_gbs(copy_bytes, median["device copy"]),
                                "vs ours": median[name] / median["ours"],
                            },
                        )
                    for name, why in notes.items():
                        print(f"      note: {name} left out of {op} {dtype_name} {m}x{n} {what}: {why}")
                    ratio = [(elements / o) / (copy_bytes / c) for o, c in zip(times["ours"], copy)]
                    of_copy.setdefault((shape, dtype_name, what), {})[op] = ratio
                    peers = [p for p in PEERS if p in times]
                    best = min(peers, key=lambda p: median[p])
                    over_peer.setdefault(what, {})[f"{op} {dtype_name} {m}x{n} ({best})"] = [
                        t / o for o, t in zip(times["ours"], times[best])
                    ]
                    goals.note(f"{op} {dtype_name} {m}x{n} {what}: ours launches {launches[op]}")
                torch.cuda.empty_cache()

    # At most 16 goal lines, each the worst of the three ops (or of every shape) it covers.
    lines = []
    for (shape, dtype_name, what), ops in of_copy.items():
        op, values = worst_op(ops)
        m, n = shape
        if shape == LONG_SHAPE:
            limit = 0.80
        elif n % 8 != 0:
            limit = 0.85
        else:
            limit = 0.85 if what == "fwd+bwd" else (0.90 if n >= 32768 else 0.95)
        lines.append((f"{m}x{n} {dtype_name} {what}: ours / device copy, the worst op ({op})", values, limit))
    odd = [line for line in lines if line[0].startswith(("16384x4097", f"{LONG_SHAPE[0]}x{LONG_SHAPE[1]}"))]
    for line in [line for line in lines if line not in odd]:
        goals.check_rounds(line[0], line[1], ">=", line[2])
    for prefix in ("16384x4097", f"{LONG_SHAPE[0]}x{LONG_SHAPE[1]}"):  # one line each, the worst dtype and op
        same = [line for line in odd if line[0].startswith(prefix) and " fwd:" in line[0]]
        if same:
            what, values, limit = min(same, key=lambda line: statistics.median(line[1]))
            goals.check_rounds(what, values, ">=", limit)
    for what, cases in over_peer.items():  # one line a pass: the case where ours is furthest behind its best peer
        case, values = worst_op(cases)
        goals.check_rounds(f"{what}: speed-up over the best peer, the worst case ({case})", values, ">=", 0.97, "x")

    steps.save(args.out / "ladder")
    table.save(args.out / "rowwise")
    (args.out / "summary.md").write_text(summary(args.out / "rowwise.csv"))
    goals.report(args.out / "goals.txt")
    if args.copy_to is not None:
        names = ("ladder.csv", "ladder.md", "rowwise.csv", "rowwise.md", "summary.md", "goals.txt")
        copy_results(args.out, args.copy_to, names)
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # torch.compile's workers can keep the interpreter from exiting (chapter 07's bench)
