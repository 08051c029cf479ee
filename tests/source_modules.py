"""A module made from source text in a file of its own, for tests whose functions need a
real source file (the transformer reads the file) and their own globals."""
import contextlib
import sys
import types

import adjoint_s2s as ad


def module_from_source(folder, name, source):
    """The module `name` executed from `source`, written to folder/<name>.py."""
    path = folder / f"{name}.py"
    path.write_text(source)
    m = types.ModuleType(name)
    m.__file__ = str(path)
    exec(compile(source, str(path), "exec"), m.__dict__)
    return m


@contextlib.contextmanager
def registered_module(folder, name, source):
    """module_from_source, also in sys.modules while the test runs (callers import it by
    name: another module's helpers), the generated code forgotten before and after."""
    ad.refresh()
    m = module_from_source(folder, name, source)
    sys.modules[name] = m
    try:
        yield m
    finally:
        sys.modules.pop(name, None)
        ad.refresh()
