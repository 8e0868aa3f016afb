"""``torch._dynamo.exc``: the exception types Dynamo raises, for code that catches them.
hookgrad's compiler raises its own errors; these exist so ``except`` clauses naming them
work."""
from .. import _missing
from .._errors import TorchDynamoException, Unsupported

__all__ = ["TorchDynamoException", "InternalTorchDynamoError", "Unsupported",
           "BackendCompilerFailed", "UserError"]


class InternalTorchDynamoError(TorchDynamoException):
    pass


class BackendCompilerFailed(TorchDynamoException):
    pass


class UserError(Unsupported):
    pass


__getattr__ = _missing.module_getattr(__name__)
