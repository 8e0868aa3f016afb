"""``python -m hookgrad``: a short tour (a tensor, a hook firing, its gradient)."""
import hookgrad as hg


def main():
    print(f"hookgrad {hg.__version__}: PyTorch's autograd hooks on JAX\n")
    x = hg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    print("x            =", x)
    y = x * x
    print("y = x * x    =", y)

    def double(grad):
        print("  hook on y fired with grad", grad)
        return grad * 2

    y.register_hook(double)
    y.grad_fn.register_prehook(lambda go: print("  MulBackward0 pre-hook sees", go[0]))
    x.register_post_accumulate_grad_hook(lambda p: print("  x.grad is now", p.grad))
    print("y.sum().backward():")
    y.sum().backward()
    print("x.grad       =", x.grad, " (2x, doubled by the hook: 4x)")
    (g,) = hg.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (g2,) = hg.autograd.grad(g.sum(), x)
    print("d/dx x^3     =", g, "\nd2/dx2 x^3   =", g2)


if __name__ == "__main__":
    main()
