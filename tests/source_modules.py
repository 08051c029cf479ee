"""A module made from source text in a file of its own, for tests whose functions need a
real source file (the transformer reads the file) and their own globals."""
import types


def module_from_source(folder, name, source):
    """The module `name` executed from `source`, written to folder/<name>.py."""
    path = folder / f"{name}.py"
    path.write_text(source)
    m = types.ModuleType(name)
    m.__file__ = str(path)
    exec(compile(source, str(path), "exec"), m.__dict__)
    return m
