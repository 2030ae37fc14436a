"""The `tt` dialect's module for the bindings: empty, as TTIR ops are unregistered and
have no Python classes (see __init__.py)."""
