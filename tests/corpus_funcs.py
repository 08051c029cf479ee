"""Small functions that exercise every construct adjoint_s2s differentiates.

``test_corpus.py`` checks each of them against central finite differences. The
functions live in this file (not built with exec) because the transformer reads their
source. Arguments are chosen by the test table, away from kinks and branch boundaries.
"""
import cmath
import math

# =====================================================================================
# Expressions: arithmetic operators
# =====================================================================================


def arith_mix(x, y):
    return x * y + x / y - y + 3.0 * x - 1.5


def floordiv_mod(x, y):
    q = x // y
    r = x % y
    return q * x + r * r + y


def mod_negative_operand(x):
    return (-x) % 3.0 * 2.0 + x % -2.5


def cancelling_terms(x):
    # the two terms' gradients cancel exactly: the gradient is 0.0
    return (-x) % 3.0 + x % -2.5


def pow_int_and_float(x):
    return x ** 3 + x ** 2.5 - 2 * x ** 0.5


def pow_negative_base(x):
    # x is negative: integer exponents only
    return x ** 3 + x ** 2 - x ** -2 + (x - 1.0) ** 4


def pow_variable_exponent(x, y):
    return x ** y + 2.0 ** y + y ** 2


def unary_ops(x, y):
    return -x * +y + -(-x) - +(x * x)


def operator_precedence(x, y):
    return x + y * x ** 2 / (1.0 + y) - (x - y) * (x + y)


# =====================================================================================
# Expressions: comparisons and boolean operators (values pass through)
# =====================================================================================


def chained_compare(x, y):
    if 0.0 < x < y <= 3.0:
        return x * y
    return x + y


def or_passes_first(a, b):
    y = a or b
    return y * y + b


def or_falls_through(x, y):
    zero = x - x  # exactly 0.0 for every x: "or" picks the right operand
    v = zero or y * 2.0
    return v * x


def and_passes_last(x, y):
    v = x and y
    return v * x


def and_or_chain(x, y, z):
    v = (x > 5.0 and y) or z
    return v * v * x + z


def not_branch(x):
    if not x > 2.0:
        return x * x
    return -x


def compare_values_used(x, y):
    bigger = x > y
    same = x == y
    return x * y if bigger and not same else x - y


# =====================================================================================
# Expressions: ternaries
# =====================================================================================


def ternary(x):
    return x * x if x > 0 else -x


def nested_ternary(x, y):
    s = x * y if x > 1.0 else (x + y if y > 1.0 else x - y)
    return s * s


# =====================================================================================
# Expressions: tuple / list / dict displays
# =====================================================================================


def tuple_display(x, y):
    t = (x, y, x * y)
    return t[0] + t[1] * t[2]


def list_display(x):
    lst = [x, x * 2.0, 3.0]
    return lst[1] * lst[0] + lst[2] * x


def dict_display(x, y):
    d = {"a": x, "b": y * y, "c": "label"}
    return d["a"] * d["b"] + len(d["c"])


def nested_display(x, y):
    data = {"pair": (x, y), "list": [x * y, [y, 2.0]]}
    return data["pair"][0] * data["list"][1][0] + data["list"][0]


def tuple_output(x, y):
    return x * y, x + y, math.sin(x)


def list_output(x):
    return [x, x * x, math.exp(-x)]


def dict_output(x, y):
    return {"prod": x * y, "ratio": x / y}


# =====================================================================================
# Expressions: unpacking (including starred)
# =====================================================================================


def tuple_unpack_arg(p):
    a, b = p
    return a * b + a


def starred_head(xs):
    a, *rest = xs
    return a * rest[0] + rest[-1] * len(rest) - rest[1]


def starred_middle(xs):
    first, *mid, last = xs
    return first * last + mid[0] * mid[1]


def swap_update(x, y):
    x, y = y, x * y
    return x - y * y


def nested_unpack(x, y, z):
    (a, b), c = (x, y), z
    return a * b * c + b


# =====================================================================================
# Expressions: subscripts and slices
# =====================================================================================


def list_slices(xs):
    head = xs[:2]
    tail = xs[2:]
    return head[0] * tail[-1] + head[1] * tail[0]


def tuple_step_slice(t):
    evens = t[::2]
    rev = t[::-1]
    return evens[0] * evens[1] + rev[0] * t[1]


def negative_index(xs):
    return xs[-1] * xs[-2] + xs[0]


def dict_subscript(d):
    return d["w"] * d["x"] + d["b"]


def nested_subscript(d):
    return d["p"][1] * d["p"][0] + d["q"]["r"] ** 2


def computed_index(xs):
    k = len(xs) - 2
    return xs[k] * xs[k + 1] + xs[k - 1]


# =====================================================================================
# Expressions: attribute reads
# =====================================================================================


def complex_real_imag(z):
    return z.real * z.imag + z.real ** 2


def conj_times_z(z):
    return (z * z.conjugate()).real


def float_attributes(x):
    return x.real * 3.0 + x.imag


# =====================================================================================
# Expressions: comprehensions and generator expressions
# =====================================================================================


def listcomp_reduced_by_loop(x):
    vals = [x * k for k in range(4)]
    acc = 0.0
    for v in vals:
        acc += v * v
    return acc


def listcomp_with_filter(xs):
    pos = [v * 2.0 for v in xs if v > 0]
    neg = [v for v in xs if v <= 0]
    acc = 1.0
    for v in pos:
        acc = acc * v
    return acc + neg[0] ** 2


def nested_listcomp(x):
    grid = [[x * i + j for j in range(2)] for i in range(1, 3)]
    return grid[0][1] * grid[1][0] + grid[1][1]


def dictcomp(x, y):
    d = {k: v * x for k, v in [("a", y), ("b", 2.0)]}
    return d["a"] + d["b"] * x


def listcomp_sum(x):
    return sum([x * k for k in range(4)])


def genexp_sum(xs):
    return sum(v * v for v in xs)


def genexp_sum_zip(xs, ys):
    return sum(a * b for a, b in zip(xs, ys))


# =====================================================================================
# Expressions: f-strings and string work
# =====================================================================================


def fstring_label(x):
    label = f"x={x:.3f}"
    if len(label) > 3:
        return x * x
    return x


def string_argument(x, name):
    msg = name.upper() + "!"
    return x * len(msg)


def string_format_split(x):
    s = "{} and {}".format(x, 2)
    parts = s.split()
    tag = "-".join(parts)
    return x * len(parts) + x * x * (tag != "")


# =====================================================================================
# Statements: assignment forms
# =====================================================================================


def multiple_targets(x):
    a = b = x * 2.0
    return a * b + a


def tuple_target(x, y):
    s, d = x + y, x - y
    return s * d


def augmented_assign(x, y):
    acc = x
    acc += y
    acc -= 0.5 * x
    acc *= y
    acc /= 2.0
    acc **= 2
    return acc


def augmented_subscript(xs):
    ys = [xs[0], xs[1]]
    ys[0] *= 3.0
    ys[1] += ys[0]
    return ys[0] * ys[1]


def reassignment_chain(x):
    y = x
    y = y * y
    y = math.sin(y)
    y = y + x
    return y


# =====================================================================================
# Statements: if / elif / else
# =====================================================================================


def piecewise(x):
    if x < -1.0:
        y = -x * x
    elif x < 1.0:
        y = x * 3.0
    else:
        y = math.log(x) + 3.0
    return y


def nested_if(x, y):
    if x > 0:
        if y > 0:
            r = x * y
        else:
            r = x - y
    else:
        r = y * y
    return r + x


def if_without_else(x):
    y = x * 2.0
    if x > 1.0:
        y = y * x
    return y


# =====================================================================================
# Statements: for loops
# =====================================================================================


def for_range(x):
    acc = 1.0
    for i in range(4):
        acc = acc * x + i
    return acc


def for_list(xs):
    prod = 1.0
    for v in xs:
        prod = prod * v
    return prod


def horner_tuple(x):
    acc = 0.0
    for c in (1.0, -2.0, 0.5, 3.0):
        acc = acc * x + c
    return acc


def for_tuple_arg(t, x):
    acc = x
    for c in t:
        acc = acc * x + c
    return acc


def for_enumerate(xs):
    acc = 0.0
    for i, v in enumerate(xs):
        acc += (i + 1) * v * v
    return acc


def for_zip(xs, ys):
    acc = 0.0
    for a, b in zip(xs, ys):
        acc += a * b
    return acc


def for_dict_items(d):
    acc = 0.0
    for k, v in d.items():
        if k != "skip":
            acc += v * v
    return acc + 0.5 * d["skip"]


def for_dict_keys(d, x):
    acc = x
    for k in d:
        acc = acc * d[k]
    return acc


def nested_loops(x, y):
    acc = 0.0
    for i in range(3):
        for j in range(2):
            acc += x ** i * (y + j)
    return acc


def loop_carried_pair(x):
    a, b = x, 1.0
    for _ in range(3):
        a, b = a * b + 1.0, a
    return a * b


# =====================================================================================
# Statements: while loops (data-dependent trip counts)
# =====================================================================================


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def while_halving(x):
    count = 0
    while x > 1.0:
        x = x / 2.0
        count += 1
    return x * count


def while_accumulate(x):
    total = 0.0
    steps = 0
    while total < 10.0:
        total += x * x
        steps += 1
    return total * x + steps


# =====================================================================================
# Statements: break, continue, return anywhere
# =====================================================================================


def for_break(xs, limit):
    acc = 0.0
    for v in xs:
        acc += v * v
        if acc > limit:
            break
    return acc * limit + 0.1 * xs[-1]


def for_continue(xs):
    acc = 0.0
    neg = 1.0
    for v in xs:
        if v < 0:
            neg = neg * v
            continue
        acc += v * v
    return acc + neg


def return_in_loop(xs, t):
    acc = 0.0
    for v in xs:
        acc += v
        if v * t > 1.0:
            return acc * t
    return -acc * t


def return_in_nested_loop(x):
    for i in range(1, 5):
        for j in range(1, 5):
            if i * j * x > 6.0:
                return x * i + j
    return -x


def break_inner_loop(x):
    acc = 0.0
    for i in range(3):
        for j in range(5):
            if j > i:
                break
            acc += x ** j
    return acc


def while_true_return(x):
    y = x
    while True:
        y = y * 1.5
        if y > 10.0:
            return y + x


def while_break_continue(x):
    i = 0
    acc = 0.0
    while i < 10:
        i += 1
        if i % 2 == 0:
            continue
        if i > 7:
            break
        acc += x * i
    return acc * x


def early_returns(x):
    if x < 0:
        return -x
    y = x * x
    if y > 4.0:
        return y
    return y + x


# =====================================================================================
# Statements: nested function definitions, lambdas, pass, assert, print, side lists
# =====================================================================================


def nested_def(x, y):
    def inner(a):
        return a * y + x

    return inner(x) * inner(y)


def nested_def_in_loop(x):
    acc = 0.0
    for k in range(1, 4):
        def term(v):
            return v ** k / k

        acc += term(x)
    return acc


def closure_rebound_after_call(x):
    k = 1.5
    def times_k(v):
        return v * k

    y = times_k(x)
    k = 5.0
    return y + k


def lambda_local(x):
    sq = lambda t: t * t * x  # noqa: E731
    return sq(x) + sq(2.0)


def pass_and_assert(x):
    assert x > 0, "x must be positive"
    if x > 1.0:
        pass
    else:
        pass
    return math.log(x) * x


def print_and_log_list(x):
    log = []
    for i in range(3):
        x = x * 1.5 + i
        log.append(round(x, 2))
        print("step", i, "value", log[-1])
    return x * len(log)


def side_list_of_strings(x, y):
    notes = []
    if x > y:
        notes.append("x wins")
    else:
        notes.append("y wins")
    notes.append(f"{x:.2f}")
    return x * y * len(notes)


# =====================================================================================
# Calls: user functions, recursion, defaults, keywords, *args, **kwargs
# =====================================================================================


def _square(v):
    return v * v


def _cube_plus(v, c):
    return v * _square(v) + c


def _chain_outer(v):
    return _chain_middle(v) + v


def _chain_middle(v):
    return math.sin(_square(v))


def calls_helpers(x):
    return _square(x) + _cube_plus(x, 1.0) * 2.0


def calls_chain(x):
    return _chain_outer(x) * x


def recursive_power(x, n):
    if n == 0:
        return 1.0
    return x * recursive_power(x, n - 1)


def power_five(x):
    return recursive_power(x, 5)


def horner_recursive(coeffs, x):
    if not coeffs:
        return 0.0
    return coeffs[0] + x * horner_recursive(coeffs[1:], x)


def poly_eval(a, b, x):
    return horner_recursive([a, b, 1.0], x)


def _scaled(v, k=2.0):
    return v * k


def default_args(x):
    return _scaled(x) + _scaled(x, 3.0) * x


def _affine(x, slope=1.0, offset=0.0):
    return slope * x + offset


def keyword_call(x, y):
    return _affine(x, slope=y, offset=x * x) + _affine(y, offset=2.0)


def keyword_only_call(x, y):
    return _weighted(x, y, w=y * 0.5)


def _weighted(a, b, *, w=1.0):
    return a * w + b * (1.0 - w)


def _total_squares(*vals):
    acc = 0.0
    for v in vals:
        acc += v * v
    return acc


def varargs_call(x, y):
    return _total_squares(x, y, x * y)


def star_args_call(x, y):
    args = [x, y]
    return _total_squares(*args) + _total_squares()


def _kw_combine(x, **opts):
    return x * opts["a"] + opts.get("b", 0.0)


def kwargs_call(x, y):
    return _kw_combine(x, a=y, b=x * x) + _kw_combine(y, a=2.0)


def double_star_call(x, y):
    opts = {"a": y, "b": x}
    return _kw_combine(x, **opts)


def _apply_twice(f, v):
    return f(f(v))


def function_argument(x):
    return _apply_twice(math.sin, x) + _apply_twice(_square, x)


def lambda_argument(x, y):
    return _apply_twice(lambda t: t * y + 1.0, x)


def map_user_function_loop(xs):
    acc = 0.0
    for v in map(_square, xs):
        acc += v
    return acc


def map_sum(xs):
    return sum(map(_square, xs))


# =====================================================================================
# Calls: closures (gradient with respect to captured variables)
# =====================================================================================


def make_scaler(c):
    def scale(x):
        return c * x * x

    return scale


def make_poly(a, b):
    def poly(x):
        return a * x * x + b * math.sin(x)

    return poly


def make_lambda(c):
    return lambda x: math.exp(c * x)


# =====================================================================================
# Calls: builtins
# =====================================================================================


def abs_min_max(x, y):
    return abs(x - y) + max(x, y) * min(x, 2.0)


def abs_only(x, y):
    return abs(x - y) * abs(x) + abs(-y)


def min_max_list(xs):
    return max(xs) - min(xs) * 2.0


def sum_list(xs):
    return sum(xs) * xs[0]


def pow_builtin(x, y):
    return pow(x, 3) + pow(x, y)


def float_builtin(x):
    return float(x) * 2.0 + float(x) ** 2


def complex_builtin(x, y):
    z = complex(x, y)
    return z.real * z.imag + abs(complex(x))


def divmod_builtin(x):
    q, r = divmod(x, 0.7)
    return q * x + r * r


def nondiff_builtins(x, xs):
    n = len(xs)
    scale = round(x, 1)
    flag = isinstance(x, float)
    acc = 0.0
    for i in range(n):
        acc += xs[i] * x * scale
    return acc if flag else -acc


# =====================================================================================
# math: every differentiable function
# =====================================================================================


def math_trig(x):
    return math.sin(x) * math.cos(x) + math.tan(x)


def math_inverse_trig(x):
    return math.asin(x) + math.acos(x) * x + math.atan(x * 3.0)


def math_hyperbolic(x):
    return math.sinh(x) + math.cosh(x) * math.tanh(x)


def math_inverse_hyperbolic(x):
    return math.asinh(x) + math.acosh(x + 1.5) + math.atanh(x * 0.5)


def math_exp_log(x):
    return math.exp(x) + math.expm1(x) * math.log(x) + math.log1p(x)


def math_log_bases(x):
    return math.log2(x) + math.log10(x) * x + math.log(x, 3.0)


def math_log_active_base(x, b):
    return math.log(x, b)


def math_roots(x):
    return math.sqrt(x) + math.cbrt(x) * math.exp2(x)


def math_special(x):
    return math.erf(x) + math.erfc(x * 0.5) * math.gamma(x) + math.lgamma(x + 1.0)


def math_two_args(y, x):
    return math.atan2(y, x) + math.hypot(x, y) + math.pow(x, y)


def math_piecewise(x, y):
    return math.fabs(x) * math.copysign(y, x) + math.fmod(x, y) + math.remainder(x, y)


def math_scaling(x):
    return math.ldexp(x, 3) + math.degrees(x) * math.radians(x)


def math_nondiff(x):
    return x * math.floor(x) + math.ceil(x) + math.trunc(x) * x


def math_fsum(xs):
    return math.fsum(xs) * xs[0]


def math_prod(xs):
    return math.prod(xs)


def math_dist(p, q):
    return math.dist(p, q)


def math_modf(x):
    frac, whole = math.modf(x)
    return frac * frac + whole


def math_frexp(x):
    m, e = math.frexp(x)
    return m * e


# =====================================================================================
# cmath: every differentiable function (complex input, real output)
# =====================================================================================


def cmath_exp_log(z):
    return abs(cmath.exp(z)) + cmath.log(z).real + cmath.log10(z).imag


def cmath_log_base(z):
    return abs(cmath.log(z, 2.0 + 1.0j))


def cmath_trig(z):
    return (cmath.sin(z) * cmath.cos(z)).real + abs(cmath.tan(z))


def cmath_inverse_trig(z):
    return cmath.asin(z).real + cmath.acos(z).imag + abs(cmath.atan(z))


def cmath_hyperbolic(z):
    return cmath.sinh(z).imag + (cmath.cosh(z) * cmath.tanh(z)).real


def cmath_inverse_hyperbolic(z):
    return cmath.asinh(z).real + cmath.acosh(z).imag + abs(cmath.atanh(z))


def cmath_sqrt_phase(z):
    return cmath.sqrt(z).real + cmath.phase(z) * 2.0


def cmath_polar(z):
    r, phi = cmath.polar(z)
    return r * phi


def cmath_rect(r, phi):
    w = cmath.rect(r, phi)
    return w.real + 2.0 * w.imag


# =====================================================================================
# Complex numbers: real-valued functions of complex inputs, complex intermediates
# =====================================================================================


def abs_squared(z):
    return abs(z) ** 2


def abs_of_exp(z):
    return abs(cmath.exp(z))


def complex_poly_real_part(z):
    w = z * z + 1j * z - 2.0
    return w.real - w.imag


def complex_quotient(z, w):
    return abs(z / w) + (z * w).imag


def complex_from_reals(a, b):
    return abs(complex(a, b))


def complex_intermediate(a, b):
    z = complex(a, b)
    w = z * z + 1j * z
    return w.real - w.imag


def real_times_complex_literal(x):
    z = x * (1.0 + 2.0j)
    return abs(z * z) + ((x + 1j) ** 2).imag


def complex_loop(z):
    acc = 0j
    for k in range(1, 4):
        acc = acc + z ** k / k
    return abs(acc)


def complex_output(z):
    return z * z + 3.0j * z


# =====================================================================================
# Argument types: ints get float gradients; str / bool / None get None
# =====================================================================================


def int_and_float(n, x):
    return n * n * x + n


def all_ints(a, b):
    return a * b + a ** 2 - 3 * b


def int_division(n, x):
    return n / 4 + x * n


def str_bool_none_args(x, name, flag, opt):
    y = x * x if flag else x
    if opt is None:
        y = y + len(name)
    return y


def bool_flag(x, negate):
    y = math.exp(x) if not negate else -math.exp(x)
    return y * x


def constant_output(x):
    return 3.0


# =====================================================================================
# Combinations: constructs used together
# =====================================================================================


def append_active_then_read(x):
    ys = []
    for k in range(4):
        ys.append(x ** k)
    return ys[1] * ys[3] + ys[-2]


def setitem_in_loop(xs):
    ys = [0.0] * len(xs)
    for i in range(len(xs)):
        ys[i] = xs[i] * (i + 1)
    return ys[0] * ys[1] + ys[2]


def slice_assignment(x, y):
    ys = [1.0, 2.0, 3.0, 4.0]
    ys[1:3] = [x, x * y]
    return ys[0] + ys[1] * ys[2] + ys[3] * y


def list_concat_and_repeat(x, y):
    lst = [x] + [y, x * y]
    rep = [y] * 3
    t = (x,) + (y,)
    return lst[2] * rep[1] + t[0] * lst[1] + len(rep)


def floordiv_mod_augmented(x, y):
    q = x
    q //= y
    r = x
    r %= y
    return q * y + r * r


def fib_poly(x, n):
    if n < 2:
        return x if n == 1 else 1.0
    return fib_poly(x, n - 1) * x + fib_poly(x, n - 2)


def fib_poly_five(x):
    return fib_poly(x, 5)


def while_tuple_state(x):
    a, b, n = x, 1.0, 0
    while a * b < 20.0:
        a, b, n = a + b, a, n + 1
    return a * b / n


def return_inside_while_inside_for(xs):
    for v in xs:
        t = v
        while t < 4.0:
            t = t * 1.7
            if t > 3.0 and v > 1.0:
                return t * v
    return -1.0


def break_while_in_for(xs):
    acc = 0.0
    for v in xs:
        t = v
        while True:
            t = t * t
            if t > 2.0:
                break
        acc += t
    return acc


def genexp_with_condition_sum(xs, c):
    return sum(v * c for v in xs if v > 0) + sum(xs, c)


def max_with_key(xs):
    return max(xs, key=abs) * min(xs, key=abs)


def min_max_several_args(x, y, z):
    return min(x, y, z) * max(x, y, z) + max(x * y, 2.0)


def dictcomp_over_items(d, s):
    scaled = {k: v * s for k, v in d.items() if k != "c"}
    acc = 0.0
    for v in scaled.values():
        acc += v * v
    return acc + d["c"]


def sum_dict_values(d):
    return sum(d.values()) * d["a"] + len(d)


def zip_three_enumerate_start(xs, ys, zs):
    acc = 0.0
    for i, (a, b, c) in enumerate(zip(xs, ys, zs), start=1):
        acc += i * a * b - c
    return acc


def lambda_default_captures(x):
    f = lambda t, c=x: t * c  # noqa: E731
    return f(2.0) + f(x, 3.0)


def _forward_kwargs(x, **opts):
    return _kw_combine(x, **opts)


def _forward_args(*vals):
    return _total_squares(*vals)


def forwarding_calls(x, y):
    return _forward_kwargs(x, a=y, b=2.0) + _forward_args(x, y)


def map_two_iterables(xs, ys):
    acc = 0.0
    for p in map(lambda a, b: a * b, xs, ys):
        acc += p
    return acc


def ternary_in_comprehension(xs):
    vals = [v * v if v > 0 else -v for v in xs]
    acc = 0.0
    for v in vals:
        acc += v
    return acc


def fstring_conversions(x):
    text = f"{x!r} {x:>10.2f} {str(x)} {repr(x)}"
    width = len(text.strip())
    return x * x if width > 5 else x


def int_conversions(x, n):
    whole = int(x)
    return x * whole + float(n) * x + n ** 2


def complex_power(z, w):
    return abs(z ** 2.5) + (z ** w).real


def unit_phase(theta):
    u = cmath.exp(1j * theta)
    return (u * u.conjugate()).real + u.imag * 2.0


def complex_arith_from_reals(a, b):
    z = a + b * 1j
    w = z.conjugate() * (2.0 - 1j)
    return abs(w) + w.real


def isinstance_dispatch(v, x):
    if isinstance(v, complex):
        return abs(v) * x
    return v * x


def math_on_ints(n, x):
    return math.sqrt(n) * x + pow(n, 2) + math.log(n)


# =====================================================================================
# Combinations: loop else clauses, walrus, starred displays, more control flow
# =====================================================================================


def while_return_and_test(x, flag):
    while x < 5.0:
        x = x * 2.0
        if x > 3.0 and flag:
            return x
    return -x


def for_else(xs, c):
    acc = 0.0
    for v in xs:
        if v > 10.0:
            break
        acc += v * c
    else:
        acc = acc * c
    return acc


def while_else(x):
    n = 0
    while x < 3.0:
        x = x * 1.5
        n += 1
    else:
        x = x + n
    return x * x


def walrus(xs):
    acc = 0.0
    for v in xs:
        if (sq := v * v) > 1.0:
            acc += sq
    return acc


def chained_tuple_assign(x, y):
    a, b = c, d = x * y, x - y
    return a * d + b * c


def subscript_multiple_targets(x):
    d = {}
    d["a"] = y = x * 2.0
    return d["a"] * y


def starred_displays(xs, x):
    longer = [*xs, x]
    pair = (*xs[:1], x * x)
    merged = {**{"a": x}, "b": xs[0]}
    return longer[-1] * longer[0] + pair[1] + merged["a"] * merged["b"]


def starred_call_args(x, y, z):
    return _total_squares(*[x, y], z)


def nested_for_comprehension(xs, ys):
    prods = [a * b for a in xs for b in ys if a > b]
    acc = 0.0
    for p in prods:
        acc += p
    return acc


def variable_slice_bounds(xs):
    i, j = 1, len(xs) - 1
    mid = xs[i:j]
    back = xs[::-1][:2]
    return mid[0] * mid[-1] + back[0] * back[1]


def membership_tests(x, name):
    values = [1.0, 2.0, x]
    score = x * x if x in values else x
    if "a" in name:
        score = score * 2.0
    return score


def while_or_condition(x):
    n = 0
    while x < 2.0 or n < 2:
        x = x * 1.3
        n += 1
    return x


def assert_active_message(x):
    assert x * x > 0.1, f"too small: {x * x}"
    return x ** 3


def lambda_returning_lambda(x, y):
    make = lambda a: (lambda b: a * b + a)  # noqa: E731
    return make(x)(y) * make(y)(2.0)


def mean_of_list(xs):
    return sum(xs) / len(xs) + max(v * v for v in xs)


def recursive_nested_def(x):
    def walk(v, depth):
        if depth == 0:
            return v
        return walk(math.sin(v) + v, depth - 1)

    return walk(x, 3)


def closure_appends_to_outer(x):
    seen = []

    def record(v):
        seen.append(v * v)
        return v + 1.0

    y = record(record(x))
    return y * seen[0] + seen[1]


def real_through_csqrt(x):
    w = cmath.sqrt(-x)
    return w.imag * 3.0 + abs(w + 1.0)


def complex_methods(z):
    w = complex(z).conjugate()
    return (w * z).real + abs(w - 1.0)


def abs_round_int(n, x):
    return abs(n) * x + round(x * n) + abs(-x)


def builtin_keywords(x, y, xs):
    return (pow(base=x, exp=3) + complex(real=x, imag=y).imag * y
            + sum(xs, start=y) + max(xs, default=0.0) + round(x, ndigits=1))


# =====================================================================================
# Calls: closures that go through other calls and loops
# =====================================================================================


def make_applier(c):
    def run(x):
        return _apply_twice(lambda t: t * c + 1.0, x)

    return run


def make_counter_poly(c, d):
    def poly(x):
        acc = 0.0
        for k in range(3):
            acc = acc * x + c * k + d
        return acc

    return poly


# =====================================================================================
# Fields of objects written in place (second order: the field store, differentiated again)
# =====================================================================================


class _Total:
    def __init__(self):
        self.s = 0.0

    def add(self, v):
        self.s = self.s + v * v
        return self


class _Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def _make_pair(x):
    o = _Pair(x, x * x)
    o.b = o.b * o.a
    return o


def _bump(o, v):
    o.a = o.a * v
    o.b = o.b + v
    return 0.0


def field_written_twice_inline(x):
    t = _Total()
    t.s = t.s + x * x
    t.s = t.s + 4.0 * x * x
    return t.s * x


def method_mutates_self_twice(x):
    t = _Total()
    t.add(x)
    t.add(2.0 * x)
    return t.s * x


def object_returned_by_helper(x):
    o = _make_pair(x)
    return o.a * o.b + o.b


def helper_mutates_object_argument(x):
    o = _Pair(x, 3.0)
    _bump(o, x)
    return o.a * o.b


def _append_tanh(lst, v):
    lst.append(math.tanh(v))


def helper_appends_to_list_argument(x):
    seen = [x]
    _append_tanh(seen, x)
    return min(seen) * x


def field_updated_in_loop(x):
    o = _Pair(x, 1.0)
    for _ in range(3):
        o.b = o.b * o.a + x
    return o.b


def _merged(*dicts):
    return dict(*dicts)


def dict_through_starred_call(x, y):
    # a dict passed in *args: its gradient is a dict among the positional ones
    return _merged({"a": x, "b": y})["a"] * y
