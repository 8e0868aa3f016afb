"""The error for a PyTorch name hookgrad lacks: it says so and points to the coverage list.

Module ``__getattr__``s raise it, so ``import hookgrad as torch`` followed by ``torch.foo``
fails with a message that names ``torch.foo`` instead of a bare ``AttributeError``; on a
class, a :class:`Stub` per name PyTorch's class has and hookgrad's lacks raises it (a class
``__getattr__`` would cost every instance CPython's specialized attribute reads). It is
still an ``AttributeError``: ``hasattr`` and ``getattr(x, n, d)`` work as for any other
object.
"""

COVERAGE = "docs/api_coverage.md"


def missing(owner, torch_name, name):
    """The ``AttributeError`` for ``owner.name`` (``owner`` as Python names it, e.g.
    ``module 'hookgrad.nn'`` or ``'Tensor' object``); ``torch_name`` is the PyTorch path of
    the namespace (``torch.nn``)."""
    # private and dunder probes (copy, pickle, NumPy) stay terse; PyTorch's ``_foreach_*``
    # ops are public API (optimizers call them) despite the underscore
    if name.startswith("_") and not name.startswith("_foreach_"):
        return AttributeError(f"{owner} has no attribute {name!r}")
    return AttributeError(f"{owner} has no attribute {name!r}: hookgrad does not implement "
                          f"{torch_name}.{name} yet (see {COVERAGE} for what it covers)")


class Stub:
    """A name PyTorch's class has and hookgrad's lacks: reading it, from the class or an
    instance, raises :func:`missing`. A non-data descriptor, so an instance may still set
    the name (its ``__dict__`` wins), as on PyTorch's Tensor."""

    __slots__ = ("torch_name", "name")

    def __init__(self, torch_name, name):
        self.torch_name, self.name = torch_name, name

    def __get__(self, obj, cls=None):
        owner = (f"type object {cls.__name__!r}" if obj is None
                 else f"{type(obj).__name__!r} object")
        raise missing(owner, self.torch_name, self.name)


def stub_missing(cls, torch_name, names):
    """Give ``cls`` a :class:`Stub` for each of ``names`` it does not define."""
    for name in names:
        if not any(name in vars(k) for k in cls.__mro__):
            setattr(cls, name, Stub(torch_name, name))


def module_getattr(module_name, torch_name=None):
    """A module ``__getattr__`` raising :func:`missing` for ``module_name``."""
    torch_name = torch_name or "torch" + module_name[len("hookgrad"):]

    def __getattr__(name):
        raise missing(f"module {module_name!r}", torch_name, name)
    return __getattr__


def not_implemented(torch_name):
    """A stand-in for the PyTorch callable ``torch_name`` (``torch.jit.save``): the name
    exists, so importing code that mentions it works, and calling it raises
    ``NotImplementedError`` saying hookgrad lacks it (never silently does nothing)."""
    def stub(*args, **kwargs):
        raise NotImplementedError(f"hookgrad does not implement {torch_name} yet (see "
                                  f"{COVERAGE} for what it covers)")
    stub.__name__ = stub.__qualname__ = torch_name.rsplit(".", 1)[-1]
    stub.__doc__ = "Not implemented by hookgrad: calling it raises NotImplementedError."
    return stub


def not_implemented_class(torch_name, bases=()):
    """A stand-in for the PyTorch class ``torch_name``: it exists for ``isinstance``,
    subclassing and annotations; constructing one raises as :func:`not_implemented` does."""
    stub = not_implemented(torch_name)

    def __init__(self, *args, **kwargs):
        stub()
    module, _, name = torch_name.rpartition(".")
    return type(name, tuple(bases), {
        "__init__": __init__, "__module__": "hookgrad" + module[len("torch"):],
        "__doc__": "Not implemented by hookgrad: constructing one raises "
                   "NotImplementedError."})
