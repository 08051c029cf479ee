"""``_rt``: the names generated code calls, and nothing else.

Generated code and the rules' templates write ``_rt.<name>``; every such name is
imported here, from the module of the run time (or of the rules) that holds it, and
listed in ``__all__`` (tests/runtime/test_namespace.py checks that each ``_rt.<name>``
written anywhere in adjoint_s2s is). The run time, split by concern:

    sites.py          where a call is: the user's line, library files, generated origins
    project.py        zeros, seeds, projection onto a value's space, unbroadcast, Scattered
    structure.py      tangents of tuples, lists, dicts and closures; argument gradients
    accumulate.py     acc and the in-place accumulators; getitem/setitem gradients
    numeric.py        template helpers of the math and matmul rules (digamma, ...)
    fields.py         the field store of mutable objects (Zygote's IdDict for setfield!)
    dispatch.py       call, resolve: user rule, built-in rule, transformed source; constructors
    methods.py        call_method and the table of method rules
    objects.py        attribute and item reads (getattr_pair, getitem_pair)
    protocols.py      builtins given an object of a user class: its methods, or refused
    mutation.py       list methods, setitem, calls that keep their arguments
    operators.py      binop, unop on values the generator could not type
    rules_calls.py    rules of the dispatch and mutation helpers (nested gradients)
    rules_helpers.py  rules of the small helpers and of the identity stores
    adjoint_helpers.py  the rules' helpers, gathered by name for this namespace

The helpers of the NumPy, SciPy and scalar rules live beside their rules in rules/
(rules/numpy/*.py, rules/scalar_adjoints.py); their ``__all__`` lists them.
adjoint_helpers.py imports each by name from its module and lists them all; this
module binds every name of that list and adds the list to its own.
"""
from .project import (
    broadcast_like,
    conj,
    dense,
    im,
    im_seed,
    neg,
    re,
    re_or_self,
    real,
    real_scalar,
    scalar,
    seed,
    unbroadcast,
)
from .structure import (
    arg_grad,
    dict_key,
    dict_or_empty,
    expand,
    field,
    field_adjoint,
    fn_tangent,
    items_adjoint,
    fold_self,
    kw_grad,
    kwargs_grad,
    part,
    seq,
    seq_adjoint,
    star_part,
    starred_grad,
    starred_len,
    display_part,
    display_part_adjoint,
    without_fields,
)
from .accumulate import (
    acc,
    acc_getitem_grad,
    getitem_grad,
    getitem_grad_sparse,
    item_grad,
    part_adjoint,
    setitem_grad,
    setitem_grad_acc,
)
from .numeric import (
    digamma,
    integral_dtype,
    matmul_adjoint_a,
    matmul_adjoint_b,
    np_pad_transpose,
    polygamma2,
    shape_like,
    trigamma,
)
from .fields import (
    changes_in_place,
    field_grad_if,
    forget_fields,
    move_grad,
    put_items,
    seed_result,
    setattr_grad,
    take_items,
)
from .dispatch import (
    call,
    call_primal,
)
from .methods import (
    call_method,
    call_method_primal,
)
from .user_classes import loop_writes_list, own_field
from .resized import SizedLoop, loop_writing
from .protocols import check_unpack
from .objects import (
    attr_grad,
    entry_field_grad,
    getattr_pair,
    getitem_pair,
    index_get,
)
from .mutation import (
    append,
    call_keeping,
    call_method_keeping,
    call_primal_keeping,
    check_held,
    check_shared,
    extend,
    hand_over,
    insert,
    kept,
    pop,
    rebinding,
    replaced,
    setitem,
    private,
    setitem_arg,
    snapshot,
    unappend,
    unappend_adjoint,
    unextend,
    unextend_adjoint,
    uninsert,
    uninsert_adjoint,
    unpop,
)
from .operators import (
    binop,
    complex_power,
    in_place,
    unop,
)
from . import adjoint_helpers
# the rules' helpers: adjoint_helpers imports each by name from its rules module and
# lists them in its __all__, the one list of them
globals().update({name: getattr(adjoint_helpers, name) for name in adjoint_helpers.__all__})

# not called by generated code: entry points for adjoint_s2s's other modules and tools
from ..kinds import kinds_of, KIND, cell_kind as _cell_kind  # noqa: F401
from .dispatch import forget_pairs, globals_fit  # noqa: F401
from .fields import output_tangent, rrule_seed, is_mutable_object, drop_callee_fields, with_fields, _FIELDS, fields_of  # noqa: F401,E501
from .methods import _METHOD_RULES  # noqa: F401
from .sites import _LIBRARY_FILES, _not_users, user_call_site  # noqa: F401
from .structure import with_defaults, with_kw_defaults  # noqa: F401

__all__ = [
    "acc",
    "acc_getitem_grad",
    "append",
    "arg_grad",
    "attr_grad",
    "entry_field_grad",
    "binop",
    "complex_power",
    "broadcast_like",
    "call",
    "call_keeping",
    "call_method",
    "call_method_keeping",
    "call_method_primal",
    "call_primal",
    "call_primal_keeping",
    "changes_in_place",
    "check_held",
    "check_shared",
    "check_unpack",
    "conj",
    "dense",
    "dict_key",
    "dict_or_empty",
    "digamma",
    "expand",
    "extend",
    "field",
    "field_adjoint",
    "field_grad_if",
    "fn_tangent",
    "fold_self",
    "forget_fields",
    "getattr_pair",
    "getitem_grad",
    "getitem_grad_sparse",
    "getitem_pair",
    "hand_over",
    "im",
    "im_seed",
    "integral_dtype",
    "in_place",
    "index_get",
    "insert",
    "item_grad",
    "kept",
    "kw_grad",
    "kwargs_grad",
    "matmul_adjoint_a",
    "matmul_adjoint_b",
    "move_grad",
    "neg",
    "np_pad_transpose",
    "own_field",
    "loop_writes_list",
    "loop_writing",
    "SizedLoop",
    "part",
    "part_adjoint",
    "polygamma2",
    "pop",
    "put_items",
    "re",
    "re_or_self",
    "real",
    "real_scalar",
    "rebinding",
    "replaced",
    "scalar",
    "seed",
    "seed_result",
    "seq",
    "seq_adjoint",
    "setattr_grad",
    "setitem",
    "private",
    "setitem_arg",
    "snapshot",
    "setitem_grad",
    "setitem_grad_acc",
    "shape_like",
    "star_part",
    "starred_grad",
    "starred_len",
    "display_part",
    "display_part_adjoint",
    "take_items",
    "trigamma",
    "unappend",
    "unappend_adjoint",
    "unbroadcast",
    "unextend",
    "unextend_adjoint",
    "uninsert",
    "uninsert_adjoint",
    "unop",
    "unpop",
    "without_fields",
]
__all__ += adjoint_helpers.__all__  # the rules' helpers

# the rules of the run time's own helpers register themselves when imported

from . import rules_calls, rules_helpers  # noqa: E402,F401
