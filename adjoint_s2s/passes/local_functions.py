"""What passes/inline.py asks of the caller's own tree to inline its local functions
and calls inside expressions: which local functions (``def f`` or ``f = lambda``) are
defined once at the caller's top level and never bound again, a lambda written as the
def it stands for, the call of an expression that runs first, and whether what the
expression evaluates before that call is only names and constants."""
import builtins

import gast


def local_defs(node):
    """name -> its def (or `f = lambda` assignment): the local functions of node's top level (fn's own body, not a
    branch or a loop: defined once) whose name nothing else binds, deletes or writes an
    attribute of anywhere in fn's tree (no other def, no assignment, import, global or
    nonlocal, no parameter of that name, no `f.__code__ = ...`), with no decorator and
    no `*args`, `**kwargs` or keyword-only parameter: a call after the def calls it."""
    defs = [s for s in node.body if s.__class__ is gast.FunctionDef or lambda_of(s) is not None]
    if not defs:
        return {}
    bound = {}
    for n in gast.walk(node):
        cls = n.__class__
        if cls is gast.FunctionDef or cls is gast.AsyncFunctionDef or cls is gast.ClassDef:
            names = (n.name,)
        elif cls is gast.Name:
            names = () if n.ctx.__class__ is gast.Load else (n.id,)  # Store, Del, Param
        elif cls is gast.Attribute:
            v = n.value
            names = (v.id,) if v.__class__ is gast.Name and n.ctx.__class__ is not gast.Load else ()
        elif cls is gast.Global or cls is gast.Nonlocal:
            names = tuple(n.names)
        elif cls is gast.alias:
            names = ((n.asname or n.name).split(".")[0],)
        else:
            continue
        for x in names:
            bound[x] = bound.get(x, 0) + 1
    out = {}
    for d in defs:
        lam = lambda_of(d)
        name, a = (d.targets[0].id, lam.args) if lam is not None else (d.name, d.args)
        if bound.get(name) == 1 and not getattr(d, "decorator_list", None) and not (a.vararg or a.kwarg or a.kwonlyargs):
            out[name] = d
    return out


def lambda_of(s):
    """The lambda of `f = lambda ...: ...` (one name assigned), else None."""
    if s.__class__ is gast.Assign and len(s.targets) == 1 and s.targets[0].__class__ is gast.Name:
        v = s.value
        return v if v.__class__ is gast.Lambda else None
    return None


def local_name(d):
    """The name a def or `f = lambda ...` statement binds, else None."""
    if d.__class__ is gast.FunctionDef:
        return d.name
    return d.targets[0].id if lambda_of(d) is not None else None


def as_def(d):
    """d, a local def, or the def `f = lambda a: e` (d) stands for: `def f(a): return e`."""
    lam = lambda_of(d)
    if lam is None:
        return d
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    out = gast.FunctionDef(name=d.targets[0].id, args=lam.args, body=[ret], decorator_list=[], returns=None,
                           type_comment=None, type_params=[])
    gast.copy_location(out, lam)
    return out


DEFS = (gast.FunctionDef, gast.Assign)

_CONDITIONAL = (
    gast.BoolOp, gast.IfExp, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
    gast.Dict, gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await,
)


def first_call(e, ready, by_name=True):
    """(call, parent, field, index in the field's list or None, ready(call)): the call
    of e, by name and ready(call) not None, that may run before everything else in e
    does: no call (or walrus) of e completes before Python starts evaluating it (the
    calls in its own arguments run before its body either way), and it is not in a part
    evaluated only on some paths or in an order of its own (`and`, `or`, `a if c else
    b`, a chained comparison, a comprehension, a dict display); None when there is none.
    Such a part, or a walrus, counts as a call where it stands. by_name: only calls of
    a name are asked of ready (else a method's too)."""
    done = 0  # the calls completed so far, in the order of evaluation
    stack = [(e, None, None, None, None)]
    while stack:
        node, parent, field, index, entered = stack.pop()
        cls = node.__class__
        if entered is not None:  # leaving node: what it evaluates has run
            if cls is gast.Call:
                if entered == 0 and (node.func.__class__ is gast.Name or not by_name):
                    got = ready(node)
                    if got is not None:
                        return node, parent, field, index, got
                done += 1
            continue
        if cls is gast.NamedExpr or isinstance(node, _CONDITIONAL) or cls is gast.Compare and len(node.ops) > 1:
            if cls is gast.NamedExpr or any(n.__class__ in _EFFECTS for n in gast.walk(node)):
                done += 1
            continue
        stack.append((node, parent, field, index, done))
        children = []
        for f in node._fields:  # (the fields' order is the order of evaluation)
            v = getattr(node, f, None)
            if isinstance(v, list):
                children.extend((x, node, f, i) for i, x in enumerate(v) if isinstance(x, (gast.expr, gast.keyword)))
            elif isinstance(v, (gast.expr, gast.keyword)):
                children.append((v, node, f, None))
        for c in reversed(children):
            stack.append(c + (None,))
    return None


_EFFECTS = (gast.Call, gast.NamedExpr)


def fresh_name(base, ctx):
    """base, or base_2, base_3...: the first that is no name taken in the caller, no global
    of its module and no builtin (then taken)."""
    cand = base
    i = 1
    while cand in ctx.taken or cand in ctx.fn.__globals__ or hasattr(builtins, cand):
        i += 1
        cand = f"{base}_{i}"
    ctx.taken.add(cand)
    return cand


def take_out(s, call, parent, field, index, t):
    """`t = call`, at s's place, for the call that first_call found in s (its parent's
    field, at index in it when a list): s then reads the name t there."""
    new = gast.Assign(targets=[gast.Name(id=t, ctx=gast.Store(), annotation=None, type_comment=None)],
                      value=call, type_comment=None)
    gast.copy_location(new, s)
    new.end_lineno = getattr(s, "end_lineno", None)
    read = gast.Name(id=t, ctx=gast.Load(), annotation=None, type_comment=None)
    if index is None:
        setattr(parent, field, read)
    else:
        getattr(parent, field)[index] = read
    return new


def only_names_before(root, call):
    """Is everything root evaluates before call starts a name or a constant? The body of
    a method may change what a value computed before it read (o's fields, an array it
    writes into), never what a name is bound to: hoisted, the call runs before the
    operators that in Python took their operands' values first."""
    path = _path(root, call)
    for parent, child in zip(path, path[1:]):
        for sib in _children(parent):
            if sib is child:
                break
            v = sib.value if sib.__class__ is gast.keyword else sib
            if v.__class__ is not gast.Name and v.__class__ is not gast.Constant:
                return False
    return True


def _path(root, target):
    """The nodes from root down to target (target in root's tree)."""
    stack = [(root, [root])]
    while stack:
        n, path = stack.pop()
        if n is target:
            return path
        stack.extend((c, path + [c]) for c in _children(n))
    return [root, target]  # (not reached: first_call found target in root)


def _children(node):
    """node's expressions (and keywords), in the order Python evaluates them."""
    for f in node._fields:
        v = getattr(node, f, None)
        for x in v if isinstance(v, list) else (v,):
            if isinstance(x, (gast.expr, gast.keyword)):
                yield x
