/* python312.dll stand-in: just enough of CPython's object model, thread
 * machinery and shutdown sequence to reproduce the WinML crash faithfully:
 *
 *   main thread : Py_Main -> pymain_run_python (runs "winml build": two
 *                 singletons each create a windowsml.EpCatalog through ctypes and
 *                 enumerate providers; a background worker thread keeps the
 *                 second one alive) -> Py_FinalizeEx -> wait_for_thread_shutdown
 *                 (joins the non-daemon thread, as threading._shutdown does)
 *   worker      : thread_run -> t_bootstrap -> the worker drops its last
 *                 reference at shutdown -> _Py_Dealloc -> subtype_dealloc ->
 *                 PyObject_CallFinalizerFromDealloc -> slot_tp_finalize ->
 *                 EpCatalog.__del__ -> EpCatalog.close -> ctypes call
 *                 WinMLEpCatalogRelease(self._handle)  => access violation
 *
 * "Python functions" are modelled as code objects run by _PyEval_EvalFrameDefault
 * so the native stack has the same shape as a real CPython 3.12 stack. */
#include "../common/dtcommon.h"
#include <stdio.h>
#include <string.h>

/* --------------------------------------------------------- object model -- */
typedef struct _typeobject PyTypeObject;
typedef struct _object {
    volatile LONG ob_refcnt;
    PyTypeObject *ob_type;
} PyObject;
struct _typeobject {
    const char *tp_name;
    void (*tp_dealloc)(PyObject *);
    void (*tp_finalize)(PyObject *);
};

typedef struct {
    const char *co_filename;
    const char *co_name;
    int co_firstlineno;
} PyCodeObject;

typedef struct _frame {
    PyCodeObject *f_code;
    PyObject *f_self;
    struct _frame *f_back;
} _PyInterpreterFrame;

/* ctypes foreign function, provided by _ctypes.pyd */
typedef struct {
    PyObject ob_base;
    void *b_ptr; /* the C function */
    const char *name;
} PyCFuncPtrObject;
typedef __int64 (*PFN_PyCFuncPtr_call)(PyCFuncPtrObject *self, int nargs, void **args);
typedef PyCFuncPtrObject *(*PFN_ctypes_dlsym)(const wchar_t *dll, const char *name);
static PFN_PyCFuncPtr_call p_PyCFuncPtr_call;
static PFN_ctypes_dlsym p_ctypes_dlsym;

/* windowsml.EpCatalog instance */
typedef struct {
    PyObject ob_base;
    void *_handle;
    PyCFuncPtrObject *release;
} EpCatalogObject;

static PyCodeObject code_del = {"windowsml/__init__.py", "__del__", 437};
static PyCodeObject code_close = {"windowsml/__init__.py", "close", 424};

NOINLINE __declspec(dllexport) PyObject *_PyEval_EvalFrameDefault(_PyInterpreterFrame *frame);

NOINLINE static void slot_tp_finalize(PyObject *self)
{
    /* Look up and call type(self).__del__ */
    _PyInterpreterFrame f = {&code_del, self, NULL};
    _PyEval_EvalFrameDefault(&f);
}

NOINLINE static int PyObject_CallFinalizerFromDealloc(PyObject *self)
{
    self->ob_refcnt = 1; /* resurrect temporarily, as CPython does */
    self->ob_type->tp_finalize(self);
    return --self->ob_refcnt != 0;
}

NOINLINE static void subtype_dealloc(PyObject *self)
{
    if (self->ob_type->tp_finalize && PyObject_CallFinalizerFromDealloc(self)) return;
    free(self);
}

NOINLINE __declspec(dllexport) void _Py_Dealloc(PyObject *op) { op->ob_type->tp_dealloc(op); }

static inline void Py_DECREF(PyObject *op)
{
    if (InterlockedDecrement(&op->ob_refcnt) == 0) _Py_Dealloc(op);
}

static PyTypeObject EpCatalog_Type = {"windowsml.EpCatalog", subtype_dealloc, slot_tp_finalize};

/* The bytecode interpreter, reduced to the two methods involved. */
NOINLINE __declspec(dllexport) PyObject *_PyEval_EvalFrameDefault(_PyInterpreterFrame *frame)
{
    EpCatalogObject *self = (EpCatalogObject *)frame->f_self;
    if (frame->f_code == &code_del) {
        /* def __del__(self): self.close() */
        _PyInterpreterFrame callee = {&code_close, frame->f_self, frame};
        return _PyEval_EvalFrameDefault(&callee);
    }
    if (frame->f_code == &code_close) {
        /* def close(self):
         *     if self._handle:
         *         _lib.WinMLEpCatalogRelease(self._handle)
         *         self._handle = None */
        if (self->_handle) {
            void *args[1] = {self->_handle};
            p_PyCFuncPtr_call(self->release, 1, args);
            self->_handle = NULL;
        }
    }
    return NULL;
}

/* ---------------------------------------------------- the build program -- */
static wchar_t g_winml_dll[MAX_PATH];

NOINLINE static EpCatalogObject *EpCatalog_new(void)
{
    EpCatalogObject *cat = (EpCatalogObject *)calloc(1, sizeof(*cat));
    cat->ob_base.ob_refcnt = 1;
    cat->ob_base.ob_type = &EpCatalog_Type;
    PyCFuncPtrObject *create = p_ctypes_dlsym(g_winml_dll, "WinMLEpCatalogCreate");
    PyCFuncPtrObject *find = p_ctypes_dlsym(g_winml_dll, "WinMLEpCatalogFindAllProviders");
    cat->release = p_ctypes_dlsym(g_winml_dll, "WinMLEpCatalogRelease");
    void *args[1] = {&cat->_handle};
    p_PyCFuncPtr_call(create, 1, args);
    void *args2[1] = {cat->_handle};
    p_PyCFuncPtr_call(find, 1, args2); /* find_all_providers(): reads the EP paths */
    return cat;
}

/* --------------------------------------------------------------- threads -- */
typedef struct {
    PyObject *held; /* the worker's reference to the registry's EpCatalog */
    HANDLE shutdown_requested;
    HANDLE finished;
} bootstate;

static bootstate g_worker;

NOINLINE static void t_bootstrap(bootstate *boot)
{
    /* threading.Thread.run(): background work, then wait for shutdown. */
    WaitForSingleObject(boot->shutdown_requested, INFINITE);
    /* The thread's frame goes away: its last reference to the catalog drops. */
    PyObject *obj = boot->held;
    boot->held = NULL;
    Py_DECREF(obj);
    SetEvent(boot->finished);
}

static DWORD WINAPI thread_run(LPVOID arg)
{
    dt_name_thread(GetCurrentThread(), L"python-finalizer");
    t_bootstrap((bootstate *)arg);
    return 0;
}

NOINLINE __declspec(dllexport) unsigned long PyThread_start_new_thread(LPTHREAD_START_ROUTINE func,
                                                                       void *arg)
{
    DWORD tid = 0;
    HANDLE h = CreateThread(NULL, 0, func, arg, 0, &tid);
    CloseHandle(h);
    return tid;
}

/* -------------------------------------------------------------- lifecycle -- */
static EpCatalogObject *g_winml_singleton; /* WinML (winml.py) */

NOINLINE static void wait_for_thread_shutdown(void)
{
    /* threading._shutdown(): tell non-daemon threads to finish, then join. */
    SetEvent(g_worker.shutdown_requested);
    WaitForSingleObject(g_worker.finished, INFINITE);
}

NOINLINE static void finalize_modules(void)
{
    if (g_winml_singleton) Py_DECREF(&g_winml_singleton->ob_base);
}

NOINLINE __declspec(dllexport) int Py_FinalizeEx(void)
{
    wait_for_thread_shutdown();
    finalize_modules();
    return 0;
}

NOINLINE static int pymain_run_python(void)
{
    /* import ctypes */
    HMODULE ctypes = LoadLibraryW(L"C:\\Python312\\DLLs\\_ctypes.pyd");
    if (!ctypes) return 1;
    p_PyCFuncPtr_call = (PFN_PyCFuncPtr_call)GetProcAddress(ctypes, "PyCFuncPtr_call");
    p_ctypes_dlsym = (PFN_ctypes_dlsym)GetProcAddress(ctypes, "ctypes_dlsym");
    lstrcpyW(g_winml_dll,
             L"C:\\Python312\\Lib\\site-packages\\windowsml\\Microsoft.Windows.AI.MachineLearning.dll");

    /* winml build: WinML.__init__ and WinMLEPRegistry._load_ep_catalog each
     * create an EpCatalog and enumerate the execution providers. */
    g_winml_singleton = EpCatalog_new();
    EpCatalogObject *registry_catalog = EpCatalog_new();

    /* A background (non-daemon) thread holds the registry's catalog. */
    g_worker.held = &registry_catalog->ob_base;
    g_worker.shutdown_requested = CreateEventW(NULL, TRUE, FALSE, NULL);
    g_worker.finished = CreateEventW(NULL, TRUE, FALSE, NULL);
    PyThread_start_new_thread(thread_run, &g_worker);
    /* ... optimize / quantize stages succeed; quantized.onnx is written ... */
    return 0;
}

__declspec(dllexport) int Py_Main(int argc, wchar_t **argv)
{
    (void)argc;
    (void)argv;
    int status = pymain_run_python();
    if (Py_FinalizeEx() < 0) status = 120;
    return status;
}
