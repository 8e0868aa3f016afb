"""Constructors that keep their arguments as attributes of the same names."""


def keep(obj, scope: dict, *names: str) -> None:
    """``obj.<name> = scope[name]`` for each name, in order: ``keep(self, locals(), "eps",
    "affine")`` is ``self.eps = eps; self.affine = affine``, through ``obj``'s own
    ``__setattr__`` (a Module registers what it is given).

    A constructor calls it after PyTorch's argument checks, naming the arguments PyTorch
    keeps under their own names; what it keeps under another name or changed is still
    written out."""
    for name in names:
        setattr(obj, name, scope[name])
