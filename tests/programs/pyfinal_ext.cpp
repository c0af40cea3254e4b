// A CPython extension whose native worker thread calls back into Python
// when its work completes, the way GLib/GDBus callbacks and pybind11 thread
// pools do, guarding the callback with a catch-all as C++ code often does.
//
// At exit the interpreter finalizes while the worker is still busy: once
// Py_FinalizeEx has marked the runtime as finalizing, a thread that takes
// the GIL is ended by PyThread_exit_thread (CPython before 3.14), which
// unwinds it with pthread_exit's forced unwind. The catch-all swallows that
// unwind, and the C++ runtime aborts ("FATAL: exception not rethrown"):
// SIGABRT on the worker while the main thread is inside Py_FinalizeEx
// (here: deallocating the module's objects, with the GIL released).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <unistd.h>

#include <cstdio>

namespace {

__attribute__((noinline)) void deliver_result()
{
    try {
        PyGILState_STATE state = PyGILState_Ensure();
        PyRun_SimpleString("pass");
        PyGILState_Release(state);
    } catch (...) {
        // "Never let an exception escape a callback": also swallows the
        // forced unwind of PyThread_exit_thread.
        std::fputs("pyfinal_ext: callback failed\n", stderr);
    }
}

__attribute__((noinline)) void *worker_main(void *)
{
    pthread_setname_np(pthread_self(), "dbus-worker");
    sleep(1); // the work: finishes while the interpreter finalizes
    deliver_result();
    return nullptr;
}

// A module-level object whose deallocation, during finalization, waits
// for an I/O flush with the GIL released.
struct Flusher {
    PyObject_HEAD
};

__attribute__((noinline)) void flusher_dealloc(PyObject *self)
{
    Py_BEGIN_ALLOW_THREADS
    sleep(3);
    Py_END_ALLOW_THREADS
    Py_TYPE(self)->tp_free(self);
}

PyTypeObject FlusherType = {
    PyVarObject_HEAD_INIT(nullptr, 0)
};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
};

} // namespace

PyMODINIT_FUNC PyInit_pyfinal_ext()
{
    FlusherType.tp_name = "pyfinal_ext.Flusher";
    FlusherType.tp_basicsize = sizeof(Flusher);
    FlusherType.tp_flags = Py_TPFLAGS_DEFAULT;
    FlusherType.tp_new = PyType_GenericNew;
    FlusherType.tp_dealloc = flusher_dealloc;
    if (PyType_Ready(&FlusherType) < 0)
        return nullptr;
    module.m_name = "pyfinal_ext";
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return nullptr;
    PyObject *flusher = PyType_GenericNew(&FlusherType, nullptr, nullptr);
    if (!flusher || PyModule_AddObject(m, "flusher", flusher) < 0)
        return nullptr;
    pthread_t worker;
    pthread_create(&worker, nullptr, worker_main, nullptr);
    pthread_detach(worker);
    return m;
}
