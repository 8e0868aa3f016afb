"""``cudnn_is_acceptable`` and ``is_vulkan_available`` answer as PyTorch's CPU build."""
from tests.differential import raises_as_torch, same_as_torch


def test_answers_as_torch():
    def run(L):
        cpu = L.ones(2, device="cpu")
        return [L.cudnn_is_acceptable(cpu), L.cudnn_is_acceptable(cpu.int()),
                L.is_vulkan_available()]
    assert same_as_torch(run) == [False, False, False]


def test_cudnn_is_acceptable_needs_a_tensor():
    raises_as_torch(lambda L: L.cudnn_is_acceptable(3), TypeError,
                    r"cudnn_is_acceptable\(\): argument 'input' \(position 1\) must be Tensor, "
                    "not int")
