"""Constructors that keep their arguments as attributes of the same names, and that are
named for their class."""
import types


def keep(obj, scope: dict, *names: str) -> None:
    """``obj.<name> = scope[name]`` for each name, in order: ``keep(self, locals(), "eps",
    "affine")`` is ``self.eps = eps; self.affine = affine``, through ``obj``'s own
    ``__setattr__`` (a Module registers what it is given).

    A constructor calls it after PyTorch's argument checks, naming the arguments PyTorch
    keeps under their own names; what it keeps under another name or changed is still
    written out."""
    for name in names:
        setattr(obj, name, scope[name])


def own_init(cls: type) -> type:
    """Give ``cls`` its own copy of the ``__init__`` it would share (inherited from a
    private base, or made for several classes), named ``<cls>.__init__``: a wrong call's
    ``TypeError`` then names ``cls``, as where PyTorch's class writes out its own. A class
    decorator, for the classes whose PyTorch ``__init__`` is their own; the copy shares the
    code, defaults, annotations and ``super()`` cell."""
    init = cls.__init__
    own = types.FunctionType(init.__code__, init.__globals__, init.__name__,
                             init.__defaults__, init.__closure__)
    own.__kwdefaults__ = init.__kwdefaults__
    own.__dict__.update(init.__dict__)
    own.__annotations__, own.__doc__ = init.__annotations__, init.__doc__
    own.__module__, own.__qualname__ = cls.__module__, f"{cls.__qualname__}.__init__"
    cls.__init__ = own
    return cls
