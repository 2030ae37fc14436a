"""TTIR's `tt` dialect: its ops are unregistered and have no Python classes (see
__init__.py); this module only tells the bindings that there is nothing to look for."""
