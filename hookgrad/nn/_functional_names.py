"""The names ``torch.nn.functional`` exports beside its functions: the TorchScript typing
helpers its signatures use (``BroadcastingList1/2/3``, ``DType``, ``Optional``,
``TYPE_CHECKING``) and the docstring notes it shares with ``torch`` (dicts of text for
``str.format``).
"""
from typing import TYPE_CHECKING, Optional  # noqa: F401 - re-exported, as PyTorch's


class _BroadcastingList:
    """``BroadcastingListN[T]``: TorchScript's "a T or N of them"; plain Python reads
    nothing into it (subscripting gives None)."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()

# a dtype argument's annotation; outside type checking it is ``int``, as PyTorch's
DType = int

reproducibility_notes = {
    "forward_reproducibility_note": (
        "This operation may behave nondeterministically on an accelerator; results can "
        "differ between runs. See :doc:`/notes/randomness` for details."),
    "backward_reproducibility_note": (
        "This operation may give nondeterministic gradients on an accelerator; they can "
        "differ between runs. See :doc:`/notes/randomness` for details."),
    "cudnn_reproducibility_note": (
        "On a GPU, the library kernel XLA picks may be nondeterministic; "
        "``torch.use_deterministic_algorithms(True)`` asks for deterministic ones. See "
        ":doc:`/notes/randomness` for details."),
}

sparse_support_notes = {
    "sparse_beta_warning": (
        "\n.. warning::\n    hookgrad has no sparse layouts: sparse inputs are not supported.\n"),
}

tf32_notes = {
    "tf32_note": "On GPUs, float32 products may run in TensorFloat32 as "
                 "``torch.set_float32_matmul_precision`` allows.",
}
