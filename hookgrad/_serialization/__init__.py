"""Internals of ``hookgrad.save`` / ``hookgrad.load``: PyTorch's checkpoint names
(``_names``), the zip archive (``_archive``), the writer (``_writer``) and the reader
(``_reader``)."""
