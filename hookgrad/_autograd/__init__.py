"""The autograd core below the op table: the graph (Node, AccumulateGrad, GradientEdge),
saved tensors, grad and anomaly mode, and the hook rules. The engine that runs it lives
in ``hookgrad._engine``; public paths live in ``hookgrad.autograd`` (facades), and
nothing internal imports those.
"""
