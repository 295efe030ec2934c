// PITFALL (seed): `return grad_x, grad_b;` in C++ is the comma operator, not "return two values".
// The left operand is evaluated and thrown away; the function returns grad_b alone. The seed's backward returned
// one at::Tensor, so this compiled, and every gradient of x was silently lost.
//
// Compile with warnings on and the compiler tells you (tests/test_pitfalls.py does exactly this):
//   g++ -Wall -Wextra comma_return.cpp -o comma_return && ./comma_return
// A plain std::vector<double> stands in for a tensor so the demo compiles in a second without PyTorch.
#include <cstdio>
#include <tuple>
#include <vector>

using Tensor = std::vector<double>;

// What the seed wrote: the return type holds one tensor, and the comma operator picks grad_b.
Tensor pitfall_backward(const Tensor &x, const Tensor &grad_y) {
    Tensor grad_x(x.size()), grad_b(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        grad_x[i] = 2.0 * x[i] * grad_y[i];
        grad_b[i] = grad_y[i];
    }
    return grad_x, grad_b;  // the bug: returns grad_b only (-Wall: "left operand of comma operator has no effect")
}

// The fix: return both, as a tuple (what a TORCH_LIBRARY op with schema "-> (Tensor, Tensor)" returns).
std::tuple<Tensor, Tensor> fixed_backward(const Tensor &x, const Tensor &grad_y) {
    Tensor grad_x(x.size()), grad_b(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        grad_x[i] = 2.0 * x[i] * grad_y[i];
        grad_b[i] = grad_y[i];
    }
    return {grad_x, grad_b};
}

static void print(const char *name, const Tensor &t) {
    std::printf("%s", name);
    for (double v : t) std::printf(" %g", v);
    std::printf("\n");
}

int main() {
    const Tensor x = {1.0, 2.0, 3.0}, grad_y = {0.5, 0.25, -1.0};
    print("x", x);
    print("grad_y", grad_y);
    print("pitfall_backward", pitfall_backward(x, grad_y));
    const auto [grad_x, grad_b] = fixed_backward(x, grad_y);
    print("fixed_grad_x", grad_x);
    print("fixed_grad_b", grad_b);
    return 0;
}
