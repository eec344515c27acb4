"""The interpreters: one module per interpreter (``eval``: evaluation that remembers what it
made; ``ad``: JVP and linearize; ``partial_eval``: jaxpr tracing; ``transpose``: the backward
pass; ``batching``: vmap; ``tape``: recording the forward pass) and ``codegen``, jit's code
generator.  Each owns the rule table of its interpreter; none imports a primitive family,
and only ``codegen`` itself knows how code is generated (``functrans.reverse_mode`` and the
``jit`` primitive call it)."""
