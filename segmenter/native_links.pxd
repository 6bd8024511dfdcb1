# The canonical-link fast path of native_links.pyx, for the modules of the compiled scan.

cdef object _canonical_link(str href, str base)
