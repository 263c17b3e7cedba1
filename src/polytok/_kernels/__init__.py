"""polytok's compiled kernels: one C extension module per hot loop, built by ``setup.py``.

Nothing imports these directly: stages ask `polytok.kernels.kernel` for theirs, which
answers None on the pure-Python path.
"""
