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
    mutation.py       list methods, setitem, calls that keep their arguments
    operators.py      binop, unop on values the generator could not type
    rules_calls.py    rules of the dispatch and mutation helpers (nested gradients)
    rules_helpers.py  rules of the small helpers and of the identity stores
    adjoint_helpers.py  the rules' helpers, gathered by name for this namespace

The helpers of the NumPy, SciPy and scalar rules live beside their rules in rules/
(rules/numpy/*.py, rules/scalar_adjoints.py); their ``__all__`` lists them.
adjoint_helpers.py imports each by name from its module and lists them all; this
module imports them from there and adds that list to its own.
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
    fold_self,
    kw_grad,
    kwargs_grad,
    part,
    seq,
    seq_adjoint,
    star_part,
    starred_grad,
    subdict,
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
from .objects import (
    attr_grad,
    getattr_pair,
    getitem_pair,
    index_get,
)
from .mutation import (
    append,
    call_keeping,
    call_method_keeping,
    call_primal_keeping,
    check_shared,
    extend,
    hand_over,
    insert,
    kept,
    pop,
    rebinding,
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
    unop,
)
from . import adjoint_helpers
from .adjoint_helpers import (  # noqa: F401 - the rules' helpers, listed in adjoint_helpers.__all__
    acc_extremum_adjoint, acosh_partial, angle_adjoint, asin_partial, asinh_partial,
    atan2_partial_x, atan2_partial_y, complex_im_adjoint, divmod_adjoint_a,
    divmod_adjoint_b, frexp_adjoint, modf_adjoint, modulus_adjoint, norm_partial,
    np_absolute_adjoint, np_angle_adjoint, np_append_adjoint_arr, np_append_adjoint_values,
    np_arange_adjoint, np_array_adjoint, np_atleast_adjoint, np_average_adjoint_a,
    np_average_adjoint_weights, np_cholesky_adjoint, np_clip_above, np_clip_below,
    np_clip_inside, np_column_stack_adjoint, np_concatenate_adjoint, np_convolve_adjoint_a,
    np_convolve_adjoint_v, np_copysign_partial, np_correlate_adjoint_a,
    np_correlate_adjoint_v, np_cross_adjoint_a, np_cross_adjoint_b, np_cumprod_adjoint,
    np_cumsum_adjoint, np_det_adjoint, np_diag_adjoint, np_diagonal_adjoint,
    np_diff_adjoint, np_dot_adjoint_a, np_dot_adjoint_b, np_dstack_adjoint,
    np_ediff1d_adjoint, np_ediff1d_adjoint_begin, np_ediff1d_adjoint_end, np_eig_adjoint,
    np_eigh_adjoint, np_eigvals_adjoint, np_eigvalsh_adjoint, np_einsum_adjoint,
    np_extremum_adjoint, np_extremum_select, np_fft_adjoint, np_fftn_adjoint,
    np_fftshift_adjoint, np_fit, np_float_power_base_partial, np_fmax_share,
    np_geomspace_adjoint, np_gradient_adjoint, np_gradient_spaced_adjoint_f,
    np_gradient_spaced_adjoint_h, np_hfft_adjoint, np_hstack_adjoint, np_ifft_adjoint,
    np_ifftn_adjoint, np_ifftshift_adjoint, np_ihfft_adjoint, np_inner_adjoint_a,
    np_inner_adjoint_b, np_interp_adjoint_fp, np_interp_adjoint_left,
    np_interp_adjoint_right, np_interp_adjoint_x, np_interp_adjoint_xp, np_inv_adjoint,
    np_irfft_adjoint, np_irfftn_adjoint, np_item_adjoint, np_item_of, np_kron_adjoint_a,
    np_kron_adjoint_b, np_linspace_adjoint, np_logspace_adjoint, np_logspace_base_adjoint,
    np_lstsq_adjoint_a, np_lstsq_adjoint_b, np_matmul_grad_a, np_matmul_grad_b,
    np_matrix_norm_adjoint, np_matrix_power_adjoint, np_max_share, np_mean_adjoint,
    np_multi_dot_adjoint, np_nanmean_adjoint, np_nanprod_adjoint, np_nanquantile_adjoint_a,
    np_nanquantile_adjoint_q, np_nanstd_adjoint, np_nansum_adjoint, np_nanvar_adjoint,
    np_norm_adjoint, np_outer_adjoint_a, np_outer_adjoint_b, np_pad_adjoint,
    np_pad_value_adjoint, np_partition_adjoint, np_parts, np_pinv_adjoint,
    np_polyval_adjoint_p, np_polyval_adjoint_x, np_power_base_partial,
    np_power_exponent_partial, np_prod_adjoint, np_qr_adjoint, np_quantile_adjoint_a,
    np_quantile_adjoint_q, np_reciprocal_adjoint, np_repeat_adjoint, np_reshape_like,
    np_rfft_adjoint, np_rfftn_adjoint, np_rollaxis_adjoint, np_select_adjoint,
    np_select_adjoint_default, np_sinc_partial, np_slogdet_adjoint, np_solve_adjoint_a,
    np_solve_adjoint_b, np_sort_adjoint, np_split_adjoint, np_sqrt_adjoint,
    np_stack_adjoint, np_std_adjoint, np_sum_adjoint, np_svd_adjoint, np_svdvals_adjoint,
    np_take_adjoint, np_take_along_axis_adjoint, np_tensordot_adjoint_a,
    np_tensordot_adjoint_b, np_tensorinv_adjoint, np_tensorsolve_adjoint_a,
    np_tensorsolve_adjoint_b, np_tile_adjoint, np_tolist_adjoint, np_tolist_of,
    np_trace_adjoint, np_trapezoid_adjoint_dx, np_trapezoid_adjoint_x,
    np_trapezoid_adjoint_y, np_ufunc_outer_adjoint, np_ufunc_outer_left, np_unroll,
    np_unrot90, np_unstack_adjoint, np_untranspose, np_var_adjoint, np_vdot_adjoint_a,
    np_vdot_adjoint_b, np_vecdot_adjoint_a, np_vecdot_adjoint_b, np_vector_norm_adjoint,
    np_vstack_adjoint, polar_adjoint, pow_base_adjoint, pow_base_partial,
    pow_base_partial_exp, pow_exp_adjoint, pow_exp_partial, pow_scaled, recip,
    sp_beta_cdf_d, sp_beta_logpdf_d, sp_cho_factor_adjoint, sp_cho_solve_adjoint_b,
    sp_cho_solve_adjoint_c, sp_convolve_adjoint_in1, sp_convolve_adjoint_in2,
    sp_correlate_adjoint_in1, sp_correlate_adjoint_in2, sp_declined,
    sp_dirichlet_adjoint_alpha, sp_dirichlet_adjoint_x, sp_expm_adjoint, sp_gamma_cdf_d,
    sp_gamma_logpdf_d, sp_i1_partial, sp_i1e_partial, sp_ive_partial, sp_linalg,
    sp_log_softmax_adjoint, sp_logm_adjoint, sp_logsumexp_adjoint, sp_logsumexp_adjoint_b,
    sp_lu_factor_adjoint, sp_lu_solve_adjoint_b, sp_lu_solve_adjoint_lu, sp_mvn_adjoint_cov,
    sp_mvn_adjoint_mean, sp_mvn_adjoint_x, sp_poisson_cdf_dmu, sp_poisson_logpmf_dmu,
    sp_signal, sp_softmax_adjoint, sp_solve_banded_adjoint_ab, sp_solve_banded_adjoint_b,
    sp_solve_sylvester_adjoint_a, sp_solve_sylvester_adjoint_b,
    sp_solve_sylvester_adjoint_q, sp_solve_triangular_adjoint_a,
    sp_solve_triangular_adjoint_b, sp_special, sp_sqrtm_adjoint, sp_t_cdf_d, sp_t_logpdf_d,
    sp_trigamma, sqrt_adjoint, sqrt_partial,
)

# not called by generated code: entry points for adjoint_s2s's other modules and tools
from ..kinds import kinds_of, KIND, cell_kind as _cell_kind  # noqa: F401
from .dispatch import forget_pairs, globals_fit  # noqa: F401
from .fields import output_tangent, is_mutable_object, drop_callee_fields, with_fields, _FIELDS  # noqa: F401
from .methods import _METHOD_RULES  # noqa: F401
from .sites import _LIBRARY_FILES, _not_users, user_call_site  # noqa: F401
from .structure import with_defaults, with_kw_defaults  # noqa: F401

__all__ = [
    "acc",
    "acc_getitem_grad",
    "append",
    "arg_grad",
    "attr_grad",
    "binop",
    "broadcast_like",
    "call",
    "call_keeping",
    "call_method",
    "call_method_keeping",
    "call_method_primal",
    "call_primal",
    "call_primal_keeping",
    "changes_in_place",
    "check_shared",
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
    "part",
    "part_adjoint",
    "polygamma2",
    "pop",
    "put_items",
    "re",
    "re_or_self",
    "real",
    "rebinding",
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
    "subdict",
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
