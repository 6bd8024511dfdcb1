# The text counts of native_text.pyx, for the modules of the compiled scan that cimport them.

cdef void _count(const unsigned char* text, Py_ssize_t length, bint* in_word,
                 Py_ssize_t* nonspace, Py_ssize_t* words, Py_ssize_t* cjk) noexcept

cdef str _collapsed(str text)
