"""Functions that NumPy rule templates call (reached as ``_rt.<name>`` in templates)."""
