"""Run the transformer's passes one at a time on a small function, for the tests of each
pass (the same calls as ``transform.pair_source``, stopping where a test looks)."""
import gast

from adjoint_s2s import emit, source
from adjoint_s2s.naming import Namer
from adjoint_s2s.passes import activity, anf, check, codegen, reverse, tape
from adjoint_s2s.templates import to_source
from adjoint_s2s.transform import function_info, static_values


def normalised(fn):
    """(fn's normalised tree, its FunctionInfo, user names, the namer)."""
    node, filename, lines = source.function_node(fn)
    node = source.fresh_copy(node)
    check.check(node, filename)
    user_names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    namer = Namer(user_names | set(fn.__code__.co_freevars) | set(emit._helper_values()))
    anf.normalize(node, namer, filename, lines, static_names=static_values(fn, user_names))
    return node, function_info(fn, node, filename, fn.__globals__), user_names, namer, lines


def body_source(fn):
    """The normalised body as source lines (the reverse pass's own printer)."""
    return [codegen.stmt_src(s) if not isinstance(s, (gast.If, gast.For, gast.While)) else
            to_source(s) for s in normalised(fn)[0].body]


def analysed(fn, *kinds):
    node, info, user_names, _, _ = normalised(fn)
    return activity.analyse(node, info, kinds, (), user_names | set(fn.__code__.co_varnames))


def drafted(fn, *kinds):
    """(the reverse pass, its Draft) for argument kinds."""
    node, info, user_names, namer, lines = normalised(fn)
    facts = activity.analyse(node, info, kinds, (), user_names | set(fn.__code__.co_varnames))
    rev = reverse.Generator(node, info, facts, taken=namer.taken)
    return rev, rev.generate()


def planned(fn, *kinds):
    """(Draft, Plan, forward lines, pullback lines) after the tape planning."""
    rev, draft = drafted(fn, *kinds)
    plan = tape.plan(draft, rev.namer)
    return draft, plan, *tape.render(draft, plan)
