"""The autograd core: the graph (Node, AccumulateGrad, GradientEdge), grad mode,
saved tensors, anomaly mode, forward AD and the engine. Public paths live in
``hookgrad.autograd`` (facades); nothing internal imports those.
"""
