"""One pass per module: check, anf, activity, reverse, cleanup."""
