"""A griffe extension for newch's API reference (mkdocs.yml, mkdocstrings ``extensions``).

The reference is built by importing newch (``force_inspection``: ``newch.__all__``
is computed at import time). Inspection also sees the attributes Python puts on
every class (``__doc__``, ``__module__``, ``__dict__``, ``__weakref__``...); this
extension marks dunder *attributes* as not public so the ``public`` filter hides
them. Dunder *methods* (``Tensor.__add__``, ``Tensor.__getitem__``) stay: they are
part of the API.

Example (what the filter decides):
    >>> hidden("__module__", is_attribute=True), hidden("__add__", is_attribute=False)
    (True, False)
"""
from griffe import Extension


def hidden(name, is_attribute):
    """True for a dunder attribute (``__doc__``), False for anything else."""
    return is_attribute and name.startswith("__") and name.endswith("__")


class HideDunderAttributes(Extension):
    """Set ``public = False`` on dunder attributes as griffe creates them."""

    def on_attribute_instance(self, *, attr, **kwargs):
        if hidden(attr.name, is_attribute=True):
            attr.public = False
