"""Where the installed package finds its libraries.

In the source tree LIBDIR is None: the libraries are found through RDLM_LIBRARY or the
dynamic loader's search. `cmake --install` installs a generated copy of this file whose
LIBDIR is the prefix's library directory relative to this package, so an installed
prefix finds its own librdlm.so wherever it is moved.
"""

LIBDIR = None
