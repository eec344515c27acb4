"""The interpreters: one module per transform (evaluation, JVP, jaxpr tracing, transposition,
batching).  Each owns the rule table for its transform."""
