"""pytorch-grad-cam's ``GradCAM`` and ``GradCAMPlusPlus`` on a tiny CNN (torchvision is a
stand-in with the names the package imports, in both runs alike)."""
import os
import sys

from tests.clients._models import images, tiny_cnn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_stubs"))


def _cam(cls):
    from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget
    model, x = tiny_cnn(), images()
    with cls(model=model, target_layers=[model.conv2]) as cam:
        heat = cam(input_tensor=x, targets=[ClassifierOutputTarget(1), ClassifierOutputTarget(2)])
        outputs = cam.outputs
    return {"cam": heat, "outputs": outputs}


def grad_cam():
    from pytorch_grad_cam import GradCAM
    return _cam(GradCAM)


def grad_cam_plus_plus():
    from pytorch_grad_cam import GradCAMPlusPlus
    return _cam(GradCAMPlusPlus)
