/* Prints the CPython structure offsets dumptriage's Python-stack reader
 * needs (src/python/offsets.toml), compiled by scripts/python-offsets.sh
 * against each interpreter's own (internal) headers. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#else
#include <frameobject.h>
#endif
#include "internal/pycore_code.h"
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_dict.h"
#endif

#define P(name, value) printf("%s = %lu\n", name, (unsigned long)(value))

int main(void)
{
    printf("[\"%d.%d\"]\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
    P("runtime_interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX >= 0x030D0000
    P("runtime_finalizing", offsetof(_PyRuntimeState, _finalizing));
#else
    P("runtime_finalizing", offsetof(_PyRuntimeState, _finalizing));
#endif
    P("interp_next", offsetof(PyInterpreterState, next));
#if PY_VERSION_HEX >= 0x030C0000
    P("interp_gil", offsetof(PyInterpreterState, ceval.gil));
    P("gil_locked", offsetof(struct _gil_runtime_state, locked));
    P("gil_holder", offsetof(struct _gil_runtime_state, last_holder));
#else
    P("runtime_gil_locked", offsetof(_PyRuntimeState, ceval.gil.locked));
    P("runtime_gil_holder", offsetof(_PyRuntimeState, ceval.gil.last_holder));
#endif
#if PY_VERSION_HEX >= 0x030B0000
    P("interp_threads_head", offsetof(PyInterpreterState, threads.head));
    P("tstate_native_thread_id", offsetof(PyThreadState, native_thread_id));
#else
    P("interp_threads_head", offsetof(PyInterpreterState, tstate_head));
#endif
    P("tstate_next", offsetof(PyThreadState, next));
    P("tstate_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030D0000
    P("tstate_current_frame", offsetof(PyThreadState, current_frame));
#elif PY_VERSION_HEX >= 0x030B0000
    P("tstate_cframe", offsetof(PyThreadState, cframe));
    P("cframe_current_frame", offsetof(_PyCFrame, current_frame));
#else
    P("tstate_frame", offsetof(PyThreadState, frame));
#endif
#if PY_VERSION_HEX >= 0x030B0000
#if PY_VERSION_HEX >= 0x030D0000
    P("frame_code", offsetof(_PyInterpreterFrame, f_executable));
    P("frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#else
    P("frame_code", offsetof(_PyInterpreterFrame, f_code));
    P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#endif
    P("frame_previous", offsetof(_PyInterpreterFrame, previous));
    P("frame_owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX < 0x030C0000
    P("frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
    P("frame_localsplus", offsetof(_PyInterpreterFrame, localsplus));
    P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
    P("code_qualname", offsetof(PyCodeObject, co_qualname));
#else
    P("frame_back", offsetof(struct _frame, f_back));
    P("frame_code", offsetof(struct _frame, f_code));
    P("frame_lasti", offsetof(struct _frame, f_lasti));
    P("frame_localsplus", offsetof(struct _frame, f_localsplus));
    P("code_code", offsetof(PyCodeObject, co_code));
#endif
    P("code_filename", offsetof(PyCodeObject, co_filename));
    P("code_name", offsetof(PyCodeObject, co_name));
    P("code_linetable", offsetof(PyCodeObject, co_linetable));
    P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
    P("code_argcount", offsetof(PyCodeObject, co_argcount));
    P("ascii_size", sizeof(PyASCIIObject));
    P("compact_size", sizeof(PyCompactUnicodeObject));
    P("unicode_state", offsetof(PyASCIIObject, state));
    P("unicode_length", offsetof(PyASCIIObject, length));
    P("bytes_size", offsetof(PyVarObject, ob_size));
    P("bytes_data", offsetof(PyBytesObject, ob_sval));
    P("object_type", offsetof(PyObject, ob_type));
    P("type_name", offsetof(PyTypeObject, tp_name));
    P("type_flags", offsetof(PyTypeObject, tp_flags));
    P("type_dictoffset", offsetof(PyTypeObject, tp_dictoffset));
    P("heaptype_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
    P("dict_keys", offsetof(PyDictObject, ma_keys));
    P("dict_values", offsetof(PyDictObject, ma_values));
    P("module_dict", sizeof(PyObject));
#if PY_VERSION_HEX >= 0x030C0000
    P("long_digits", offsetof(PyLongObject, long_value.ob_digit));
#else
    P("long_digits", offsetof(PyLongObject, ob_digit));
#endif
    P("type_basicsize", offsetof(PyTypeObject, tp_basicsize));
#if PY_VERSION_HEX >= 0x030B0000
    P("dictkeys_indices", offsetof(PyDictKeysObject, dk_indices));
    P("dictkeys_nentries", offsetof(PyDictKeysObject, dk_nentries));
    P("dictkeys_log2_size", offsetof(PyDictKeysObject, dk_log2_size));
    P("dictkeys_log2_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
    P("dictkeys_kind", offsetof(PyDictKeysObject, dk_kind));
#else
    /* 3.10 does not install Objects/dict-common.h: its layout is
     * dk_refcnt, dk_size, dk_lookup, dk_usable, dk_nentries, dk_indices. */
    P("dictkeys_size", 1 * sizeof(Py_ssize_t));
    P("dictkeys_nentries", 4 * sizeof(Py_ssize_t));
    P("dictkeys_indices", 5 * sizeof(Py_ssize_t));
#endif
    return 0;
}
