"""A small pre-norm transformer block (SDPA attention + MLP) with a language-model head, built either from torch's
norms and softmax or from the chapter's, for checking that training gives the same losses.

    model = TinyLM(vocab=64, dim=64, heads=4, norm="layer", ops="rowwise")
    losses = train(model, steps=5)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rowwise.modules import LayerNorm, RMSNorm
from rowwise.ops import softmax


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=64, dim=64, heads=4, norm="layer", ops="rowwise"):
        super().__init__()
        if ops == "rowwise":
            make = LayerNorm if norm == "layer" else RMSNorm
        else:
            make = torch.nn.LayerNorm if norm == "layer" else torch.nn.RMSNorm
        self.ops, self.heads = ops, heads
        self.embed = torch.nn.Embedding(vocab, dim)
        self.norm1, self.norm2, self.norm_out = make(dim), make(dim), make(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim))
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """The probabilities of the next token (softmax over the vocabulary)."""
        x = self.embed(tokens)
        batch, length, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, length, 3, self.heads, dim // self.heads).unbind(2)
        attention = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        x = x + self.proj(attention.transpose(1, 2).reshape(batch, length, dim))
        x = x + self.mlp(self.norm2(x))
        logits = self.head(self.norm_out(x))
        return softmax(logits) if self.ops == "rowwise" else torch.softmax(logits, -1)


def batches(vocab=64, batch=8, length=32, steps=5, seed=0, device="cpu"):
    """Sequences that count up from a random start (mod vocab): a next token the model can learn in a few steps."""
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        start = torch.randint(0, vocab, (batch, 1), generator=generator)
        tokens = (start + torch.arange(length + 1)) % vocab
        yield tokens[:, :-1].to(device), tokens[:, 1:].to(device)


def loss_of(probabilities: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    picked = probabilities.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return -picked.float().clamp_min(1e-30).log().mean()


def train(model: torch.nn.Module, steps=5, device="cpu", lr=1e-2, step_fn=None) -> list[float]:
    """Adam for `steps` steps on random tokens; the loss of each step."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    forward = step_fn if step_fn is not None else model
    losses = []
    vocab = model.head.out_features
    for tokens, targets in batches(vocab=vocab, steps=steps, device=device):
        optimizer.zero_grad()
        loss = loss_of(forward(tokens), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def twin_models(norm="layer", dtype=torch.float32, device="cpu", seed=0):
    """The same initial weights, once with torch's ops and once with the chapter's."""
    torch.manual_seed(seed)
    theirs = TinyLM(norm=norm, ops="torch").to(device=device, dtype=dtype)
    ours = TinyLM(norm=norm, ops="rowwise").to(device=device, dtype=dtype)
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours
