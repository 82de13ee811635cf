"""Names of the ops ``ops/`` asks the kernels for.

Elementwise ops are named by strings: the element functions registered in
``unary_ops`` / ``binary_ops`` under those names (the constants below are kept
for readability at call sites). Reductions still switch on integer codes.
"""

# unary: out = f(x); same dtype in and out unless noted
NEG, ABS, EXP, LOG, LOG1P, SQRT, RSQRT, SIN, COS, TANH, SIGMOID, RELU = (
    "neg", "abs", "exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu")
SIGN, SQUARE, RECIPROCAL, EXPM1, FLOOR, CEIL, ROUND, TRUNC, LOGICAL_NOT = (
    "sign", "square", "reciprocal", "expm1", "floor", "ceil", "round", "trunc", "logical_not")
GELU_ERF, SILU, ERF, LOG2, EXP2, TAN, ASIN, ACOS, ATAN, SINH, COSH = (
    "gelu_erf", "silu", "erf", "log2", "exp2", "tan", "asin", "acos", "atan", "sinh", "cosh")
ERFINV = "erfinv"

# binary: out = f(a, b); comparisons and logical ops write a bool ``out``
ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM = ("add", "sub", "mul", "div", "pow", "maximum",
                                             "minimum")
EQ, NE, LT, LE, GT, GE = ("eq", "ne", "lt", "le", "gt", "ge")
LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR = ("logical_and", "logical_or", "logical_xor")
FLOOR_DIVIDE, REMAINDER, ATAN2, RSUB, RDIV, RPOW = ("floor_divide", "remainder", "atan2", "rsub",
                                                    "rdiv", "rpow")
BITWISE_AND, BITWISE_OR, BITWISE_XOR, FMOD = ("bitwise_and", "bitwise_or", "bitwise_xor", "fmod")

# reductions over the middle axis of an (O, R, I) view
SUM, PROD, MAX, MIN, ALL, ANY, SUMSQDEV, SUMEXP, NANSUM = range(200, 209)
ARGMAX, ARGMIN = range(220, 222)
