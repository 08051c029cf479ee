"""Run-time rules for builtins whose gradient depends on the structure of the arguments
(``sum``, ``min``, ``max``, ``map``, ...): pair functions registered with ``special``."""
