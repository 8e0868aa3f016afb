"""The one absent MPS backend that ``hookgrad.mps``'s modules answer for."""
from .._absent_backend import AbsentBackend

MPS = AbsentBackend("MPS")
