"""The compiled mode's machinery: state lifting, replay, tuning and host hooks.
``hookgrad.compile`` is the facade.
"""
