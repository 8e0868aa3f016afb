"""``hookgrad.distributed.tensor.DTensor``: PyTorch's distributed Tensor class."""
import subprocess
import sys

import hookgrad
from hookgrad.distributed.tensor import DTensor


def test_dtensor_is_a_tensor_class():
    assert issubclass(DTensor, hookgrad.Tensor)
    assert not isinstance(hookgrad.ones(2), DTensor)


def test_dtensor_imports_under_as_torch():
    # Hugging Face transformers imports it at import time
    code = ("import hookgrad.as_torch as a; a.install()\n"
            "from torch.distributed.tensor import DTensor\n"
            "import hookgrad.distributed.tensor as t\n"
            "assert DTensor is t.DTensor\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
