"""``torch.autograd.variable``: the legacy ``Variable`` class. (The package's ``variable``
attribute is the removed ``variable()`` function, as in PyTorch; import this module as
``from hookgrad.autograd.variable import Variable``.)"""
from .. import _missing
from .. import _errors

__all__ = ["Variable", "VariableMeta"]


class VariableMeta(type):
    """The metaclass of :class:`Variable`: every Tensor is an instance of ``Variable``, and
    calling ``Variable`` makes a Tensor."""

    def __instancecheck__(cls, other):
        from .._tensor import Tensor
        return isinstance(other, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=None):
        # the legacy constructor: a new leaf Tensor sharing ``data`` (as ``detach()``)
        from .._tensor import Tensor
        if volatile is not None:
            _errors.warn("volatile was removed and now has no effect. Use `with "
                         "torch.no_grad():` instead.", UserWarning)
        if data is None:
            return Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t


class Variable(metaclass=VariableMeta):
    """``Variable(data, requires_grad=False)``: PyTorch's legacy constructor, giving a new
    leaf Tensor that shares ``data``; ``isinstance(t, Variable)`` holds for every Tensor.

    Example::

        >>> v = Variable(hookgrad.ones(2), requires_grad=True)
        >>> v.is_leaf, v.requires_grad
        (True, True)
    """

    from .._engine.engine import execution_engine as _execution_engine  # noqa: E402


__getattr__ = _missing.module_getattr(__name__)
