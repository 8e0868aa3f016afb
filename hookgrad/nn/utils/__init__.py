"""nn utilities (clip_grad_norm_ ...)."""
