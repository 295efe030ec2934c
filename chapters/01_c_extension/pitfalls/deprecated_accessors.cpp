// PITFALL (seed): `x.type()` and `x.data<T>()` are deprecated PyTorch C++ APIs; the seed used both
// (AT_DISPATCH_FLOATING_TYPES(x.type(), ...) and x.data<scalar_t>()). They still compile, with warnings,
// and may disappear in a later release. Their current forms:
//   x.type().scalarType()   ->  x.scalar_type()
//   x.data<T>()             ->  x.data_ptr<T>(), or const_data_ptr<T>() / mutable_data_ptr<T>() to say
//                               whether you read or write (src/binding.cpp uses these)
// tests/test_pitfalls.py compiles this file with -fsyntax-only -Wall and checks that the warnings come from the
// pitfall function and none from the fixed one.
#include <ATen/core/Tensor.h>

// The seed's way: two deprecation warnings.
double pitfall_first_value(const at::Tensor &x) {
    if (x.type().scalarType() == at::kDouble) return x.data<double>()[0];
    return 0.0;
}

// The current way: no warnings.
double fixed_first_value(const at::Tensor &x) {
    if (x.scalar_type() == at::kDouble) return x.const_data_ptr<double>()[0];
    return 0.0;
}
