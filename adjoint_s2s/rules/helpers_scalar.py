"""Functions that scalar rule templates call (reached as ``_rt.<name>`` in templates)."""
