"""Rules for scipy.special (loaded only when scipy is installed)."""
