"""Operation codes shared by ``ops/`` (which picks them) and the kernels (which switch on them).

A kernel family takes a ``code`` and switches on it *outside* its inner loop, so
each loop stays a tight, vectorizable body and one compiled function serves a
whole family (few compilations on a cold cache).
"""

# unary: out = f(x); same dtype in and out unless noted
NEG, ABS, EXP, LOG, LOG1P, SQRT, RSQRT, SIN, COS, TANH, SIGMOID, RELU = range(12)
SIGN, SQUARE, RECIPROCAL, EXPM1, FLOOR, CEIL, ROUND, TRUNC, LOGICAL_NOT = range(12, 21)
GELU_ERF, SILU, ERF, LOG2, EXP2, TAN, ASIN, ACOS, ATAN, SINH, COSH = range(21, 32)

# binary: out = f(a, b); comparisons and logical ops write a bool ``out``
ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM = range(100, 107)
EQ, NE, LT, LE, GT, GE = range(107, 113)
LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR = range(113, 116)
FLOOR_DIVIDE, REMAINDER, ATAN2, RSUB, RDIV, RPOW = range(116, 122)
BITWISE_AND, BITWISE_OR, BITWISE_XOR, FMOD = range(122, 126)

# reductions over the middle axis of an (O, R, I) view
SUM, PROD, MAX, MIN, ALL, ANY, SUMSQDEV, SUMEXP, NANSUM = range(200, 209)
ARGMAX, ARGMIN = range(220, 222)
