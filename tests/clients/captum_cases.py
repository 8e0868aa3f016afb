"""captum's attribution methods on a tiny CNN (run by test_clients.py under both libraries)."""
from tests.clients._models import images, tiny_cnn


def _attr(method, **kw):
    model = tiny_cnn()
    x = images()
    return method(model).attribute(x, target=1, **kw)


def saliency():
    from captum.attr import Saliency
    return _attr(Saliency)


def integrated_gradients():
    from captum.attr import IntegratedGradients
    model, x = tiny_cnn(), images()
    attr, delta = IntegratedGradients(model).attribute(
        x, target=1, n_steps=8, return_convergence_delta=True)
    return {"attr": attr, "delta": delta}


def layer_grad_cam():
    from captum.attr import LayerGradCam
    model, x = tiny_cnn(), images()
    return LayerGradCam(model, model.conv2).attribute(x, target=2)


def layer_activation():
    from captum.attr import LayerActivation
    model, x = tiny_cnn(), images()
    return LayerActivation(model, model.relu1).attribute(x)


def deep_lift():
    from captum.attr import DeepLift
    import torch
    model, x = tiny_cnn(), images()
    return DeepLift(model).attribute(x, baselines=torch.zeros_like(x), target=0)


def guided_backprop():
    from captum.attr import GuidedBackprop
    return _attr(GuidedBackprop)
