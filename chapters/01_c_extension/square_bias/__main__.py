"""The chapter's demo (`make run`): call the C op, compare it with PyTorch, differentiate it, time it once.
Everything here runs on the CPU; this chapter has no GPU part."""

import time

import torch

from square_bias import SquareBias, square_bias


def main() -> None:
    print("square_bias: y = x*x + b, a PyTorch op written in C (chapter 01)\n")
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = square_bias(x, b)
    print(f"x =\n{x.detach()}\nb (a row, broadcast over x's rows) = {b.detach()}")
    print(f"y = square_bias(x, b) =\n{y.detach()}")
    print(f"same as x*x + b: {torch.equal(y, x * x + b)}")
    print(f"the op in the dispatcher: {torch.ops.square_bias.square_bias.default._schema}")

    y.sum().backward()
    print(f"\nafter y.sum().backward():\nx.grad (= 2x) =\n{x.grad}\nb.grad (= rows summed) = {b.grad}")

    ok = torch.autograd.gradcheck(
        square_bias,
        (
            torch.randn(3, 4, dtype=torch.float64, requires_grad=True),
            torch.randn(4, dtype=torch.float64, requires_grad=True),
        ),
    )
    print(f"gradcheck (float64, numerical vs our backward): {ok}")

    model = SquareBias(bias_shape=(3,))
    print(f"\nnn.Module wrapper: {model} with parameter bias of shape {tuple(model.bias.shape)}")

    big_x = torch.randn(1024, 1024, requires_grad=True)
    big_b = torch.randn(1024, requires_grad=True)
    for name, fn in [("C op", square_bias), ("eager", lambda x, b: x * x + b)]:
        fn(big_x, big_b).sum().backward()  # warm-up
        start = time.perf_counter()
        for _ in range(10):
            big_x.grad = big_b.grad = None
            fn(big_x, big_b).backward(torch.ones(1024, 1024))
        print(f"forward+backward at 2^20 elements, {name:5s}: {(time.perf_counter() - start) * 100:.2f} ms per call")
    print("(one quick timing; `make bench` measures properly)")
    print("\nskipped: nothing — this chapter runs entirely on the CPU")


if __name__ == "__main__":
    main()
