"""A tiny model with chapter 03's x*x + b op, trained with DistributedDataParallel (DDP), and the same training in
one process on the whole batch: with equal shares of the batch, DDP must land on the same parameters.

    model = TinyNet()                      Linear(8→16) → SquareBias (x*x + b, b a learnable (16,)) → Linear(16→1)
    ddp = DDP(model)                       copies rank 0's parameters to every rank, then hooks each parameter
    loss = mse(ddp(x_mine), y_mine)        this rank's share of the batch
    loss.backward()                        autograd runs the op's backward (chapter 03's kernels); the moment a
                                           parameter's gradient is accumulated, DDP's hook marks it ready; when
                                           every parameter of a bucket is ready, DDP all_reduces the bucket
                                           (asynchronously) while autograd goes on with earlier layers
    optimizer.step()                       backward() returned after every bucket's all_reduce: all ranks hold the
                                           same averaged gradients, so they take the same step

Why the results match single-process training: the loss is a mean over this rank's share; DDP averages the
gradients over ranks; with equal shares, the average of the share means is the mean over the whole batch.
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from multigpu.chapters import square_bias_cuda  # chapter 03's package
from multigpu.ranks import rank_device

FEATURES, HIDDEN = 8, 16
# float32 sums in another order (per rank, then across ranks) differ in the last bits; a few SGD steps keep that
# near float32's epsilon. This is the tolerance the tests and the demo hold DDP to.
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


class TinyNet(nn.Module):
    def __init__(self, features: int = FEATURES, hidden: int = HIDDEN):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.square = square_bias_cuda.SquareBias((hidden,))  # y = x*x + b, chapter 03; b is a parameter
        self.out = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.square(self.inp(x)))


def make_model(device: torch.device | str = "cpu", seed: int = 0) -> TinyNet:
    torch.manual_seed(seed)
    model = TinyNet()
    with torch.no_grad():  # start b away from 0, so that its gradient and update are not trivially small
        model.square.b.uniform_(-0.5, 0.5)
    return model.to(device)


def make_batch(batch: int, device: torch.device | str = "cpu", seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, FEATURES, generator=generator)
    y = torch.randn(batch, 1, generator=generator)
    return x.to(device), y.to(device)


def train(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float = 0.05, on_step=None
) -> list[float]:
    """Plain SGD on the mean squared error; returns each step's loss (of this process's share). on_step(i), if
    given, is called before step i (from 1)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(1, steps + 1):
        if on_step is not None:
            on_step(step)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def train_single(batch: int = 32, steps: int = 5, device: str = "cpu") -> dict[str, torch.Tensor]:
    """The reference: one process, the whole batch."""
    model = make_model(device)
    x, y = make_batch(batch, device)
    train(model, x, y, steps)
    return {name: p.detach().cpu() for name, p in model.named_parameters()}


def train_ddp(rank: int, world_size: int, batch: int = 32, steps: int = 5, log_hooks: bool = False) -> dict:
    """This rank's part of DDP training: its 1/world_size of the same batch. Returns the final parameters (and,
    with log_hooks, the order in which gradients became ready and buckets were reduced, on this rank).

    What the log shows: in step 1 DDP has one bucket (its first bucket may hold 1 MiB, and this model is far
    smaller), reduced once the whole backward is done. Then DDP rebuilds its buckets in the order the gradients
    became ready; with bucket_cap_mb tiny, from step 2 each parameter is reduced the moment its gradient is
    ready, while autograd is still running the earlier layers' backward (x*x + b's among them)."""
    if batch % world_size:
        raise ValueError(
            f"the batch of {batch} does not split into {world_size} equal shares: DDP's average would "
            "weight the shares unequally and differ from one-process training"
        )
    device = rank_device()
    model = make_model(device)
    events: list[str] = []
    if log_hooks:
        log_gradient_hooks(model, events)
    # bucket_cap_mb tiny: one bucket per parameter, so the log shows each reduction separately
    ddp = DistributedDataParallel(model, bucket_cap_mb=1e-6 if log_hooks else 25)
    if log_hooks:
        ddp.register_comm_hook(events, logging_allreduce_hook(model))
    x, y = make_batch(batch, device)
    share = batch // world_size
    mine = slice(rank * share, (rank + 1) * share)
    losses = train(ddp, x[mine], y[mine], steps, on_step=(lambda i: events.append(f"step {i}")) if log_hooks else None)
    return {
        "parameters": {name: p.detach().cpu() for name, p in model.named_parameters()},
        "losses": losses,
        "events": events,
    }


def log_gradient_hooks(model: nn.Module, events: list[str]) -> None:
    """Note when each parameter's gradient has been accumulated (the moment DDP's own hook sees it too)."""
    names = {p: n for n, p in model.named_parameters()}
    for parameter in model.parameters():
        parameter.register_post_accumulate_grad_hook(lambda p: events.append(f"gradient ready: {names[p]}"))
    # x*x + b's backward: its output's gradient arrives, then the op's backward kernels run
    model.square.register_full_backward_pre_hook(lambda m, grad: events.append("square_bias backward starts"))


def logging_allreduce_hook(model: nn.Module):
    """DDP's default reduction (all_reduce, then divide by the world size) that also logs which parameters each
    bucket holds. A comm hook gets a bucket and returns a Future of its reduced gradients."""
    names = {p: n for n, p in model.named_parameters()}

    # (DDP reads the annotations: bucket must be annotated as dist.GradBucket, not as a string)
    def hook(events: list[str], bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        members = ", ".join(names[p] for p in bucket.parameters())
        events.append(f"bucket {bucket.index()} all_reduce launched: {members}")
        tensor = bucket.buffer().div_(dist.get_world_size())
        work = dist.all_reduce(tensor, async_op=True)
        return work.get_future().then(lambda future: future.value()[0])

    return hook
