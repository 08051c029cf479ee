"""What generated code calls (``_rt``): the run time, split by concern.

Generated code names this package ``_rt``. The helpers sit on hot paths: each starts
with the fast case (a float, an array of the right shape) and falls back to the
general one.

    sites.py       where a call is: the user's line, library files, generated origins
    project.py     zeros, seeds, projection onto a value's space, unbroadcast, Scattered
    structure.py   tangents of tuples, lists, dicts and closures; argument gradients
    accumulate.py  acc and the in-place accumulators; getitem/setitem gradients
    numeric.py     template helpers of the math and matmul rules (digamma, ...)
    fields.py      the field store of mutable objects (Zygote's IdDict for setfield!)
    dispatch.py    call, resolve: user rule, built-in rule, transformed source; constructors
    methods.py     call_method and the table of method rules
    objects.py     attribute and item reads (getattr_pair, getitem_pair)
    mutation.py    list methods, setitem, calls that keep their arguments
    operators.py   binop, unop on values the generator could not type
"""
from .sites import (  # noqa: F401
    _at,
    _Attribute,
    _GENERATED,
    _GENERATED_HEAD,
    _library_file,
    _LIBRARY_FILES,
    _not_users,
    _user_file,
    _user_site,
    _where_met,
    generated_origin,
    is_library_code,
    is_library_file,
    user_call_site,
)
from .project import (  # noqa: F401
    _add_reduce,
    _BLAS_ROW,
    _fit_other,
    _is_basic_index,
    _ONES,
    _ones,
    _trailing_sum,
    broadcast_like,
    conj,
    dense,
    im,
    im_seed,
    neg,
    re,
    re_or_self,
    real,
    scalar,
    Scattered,
    seed,
    unbroadcast,
)
from .structure import (  # noqa: F401
    _arg_offset,
    _is_label,
    _LABEL_KEYS,
    _nonzero_grad,
    arg_grad,
    check_pair_keys,
    dict_key,
    dict_or_empty,
    expand,
    field,
    field_adjoint,
    fn_tangent,
    fold_self,
    fold_self_adjoint,
    GradList,
    kw_grad,
    kwargs_grad,
    part,
    seq,
    seq_adjoint,
    star_part,
    starred_grad,
    subdict,
    with_defaults,
    with_kw_defaults,
    without_fields,
)
from .accumulate import (  # noqa: F401
    _count_private_refs,
    _count_temp_refs,
    _list_slice_grad,
    _lost_writes,
    _own,
    _OWNED,
    _owned,
    _PRIVATE_REFS,
    _TEMP_REFS,
    acc,
    acc_getitem_grad,
    getitem_grad,
    getitem_grad_sparse,
    item_grad,
    part_adjoint,
    setitem_grad,
    setitem_grad_acc,
)
from .numeric import (  # noqa: F401
    _B2K,
    abs_adjoint,
    digamma,
    matmul_adjoint_a,
    matmul_adjoint_b,
    np_pad_transpose,
    phase_adjoint,
    polygamma2,
    trigamma,
    trunc_div,
)
from .fields import (  # noqa: F401
    _FIELDS,
    _ITEMS,
    _NOT_OBJECTS,
    _seed_fields,
    _store_items,
    add_field_grad,
    changes_in_place,
    drop_callee_fields,
    field_grad_if,
    forget_fields,
    is_mutable_object,
    kept_adjoint,
    move_grad,
    output_tangent,
    put_items,
    seed_result,
    setattr_grad,
    take_field_grad,
    take_fields,
    take_items,
    with_fields,
)
from .dispatch import (  # noqa: F401
    _CACHED_FUNCTIONS,
    _call_kw,
    _const_pair,
    _constructor_pair,
    _dataclass_post_init_pair,
    _fields_of,
    _function_pair,
    _hashable,
    _init_constructor_pair,
    _isderiving,
    _PRIM_PAIRS,
    _primitive_pair,
    _python_class,
    _takes_keywords,
    _user_rule_pair,
    call,
    call_primal,
    field_names,
    forget_pairs,
    globals_fit,
    instance_with_fields,
    new_instance,
    resolve,
    set_field,
)
from .methods import (  # noqa: F401
    _ARRAY_METHODS_IN_PLACE,
    _conjugate,
    _dict_copy,
    _dict_get,
    _dict_items,
    _dict_values,
    _drop_first,
    _list_copy,
    _method_rule,
    _METHOD_RULES,
    _NO_GRAD_METHODS,
    _NO_GRAD_RULES,
    _NO_GRAD_TYPES,
    call_method,
    call_method_primal,
    method_rule,
)
from .objects import (  # noqa: F401
    _fields_dict_grad,
    _getattr_builtin_pair,
    _numeric_attr_pullback,
    _NUMERIC_CONST_ATTRS,
    _NUMERIC_VALUES,
    attr_grad,
    getattr_pair,
    getitem_pair,
    index_get,
)
from .mutation import (  # noqa: F401
    _KEEP_DEPTH,
    _KEPT,
    _REBOUND,
    _REPLACED,
    _written_argument,
    append,
    call_keeping,
    call_method_keeping,
    call_primal_keeping,
    check_shared,
    extend,
    hand_over,
    insert,
    keeping,
    kept,
    pop,
    rebinding,
    setitem,
    setitem_arg,
    unappend,
    unappend_adjoint,
    unextend,
    unextend_adjoint,
    uninsert,
    uninsert_adjoint,
    unpop,
    unpop_adjoint,
)
from .operators import (  # noqa: F401
    _BINOPS,
    _BITOPS,
    _bool_operand_pair,
    _BOOLS,
    _dict_merge,
    _fold_repeat,
    _integral,
    _no_tangent_result,
    _NUMBERS,
    _split_concat,
    _split_extend,
    _SYMBOLS,
    _UNOPS,
    binop,
    unop,
)

__all__ = ["call", "call_primal", "call_method", "binop", "ZeroTangent", "NoTangent"]
from ..tangents import NoTangent, ZeroTangent  # noqa: E402,F401
from ..kinds import KIND, kinds_of  # noqa: E402,F401
from ..kinds import cell_kind as _cell_kind  # noqa: E402,F401

# template helpers written next to their rules are reached as _rt.<name> too
from ..rules.helpers_numpy import *  # noqa: E402,F401,F403
from ..rules.helpers_scalar import *  # noqa: E402,F401,F403

# the rules of the run time's own helpers register themselves when imported
from . import rules_calls, rules_helpers  # noqa: E402,F401
