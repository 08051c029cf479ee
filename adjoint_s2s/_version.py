"""The version of adjoint_s2s (one place: the package, the CLI and pyproject read it)."""
__version__ = "0.1.0"
