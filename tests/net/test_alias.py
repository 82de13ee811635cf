"""``newch.nn`` is ``newch.net``: every PyTorch import spelling reaches the same objects."""
import importlib

import newch


def test_import_spellings_resolve_to_the_same_modules():
    import newch.net as net
    import newch.nn as nn
    import newch.net.functional as F1
    import newch.nn.functional as F2
    import newch.nn.init as init
    from newch.nn import functional as F3
    assert nn is net is newch.nn is newch.net
    assert F1 is F2 is F3 is net.functional
    assert init is net.init
    assert importlib.import_module("newch.nn.init") is net.init
    assert nn.Linear is net.linear.Linear and nn.Module is net.module.Module


def test_public_names_exist():
    import newch.nn as nn
    for name in nn.__all__:
        assert hasattr(nn, name), name
    for name in nn.functional.__all__:
        assert callable(getattr(nn.functional, name)), name
    for name in nn.init.__all__:
        assert callable(getattr(nn.init, name)), name
