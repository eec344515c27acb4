"""Sweep cases of functrans/primitives/checkpoint.py's ``name`` primitive (checkpoint_name:
the identity, tagged) and of the collectives (functrans/primitives/collectives.py) under a
named vmap.  The collectives' own targeted tests are in tests/test_collectives.py."""
from __future__ import annotations

from functrans import checkpoint_name
from sweep import A, Case

PRIMITIVE_CASES = [
    Case("checkpoint_name", lambda x: checkpoint_name(x, "h") * x, [A(2, 3)]),
]
